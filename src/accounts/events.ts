// The account area's event catalog, beside the relay's (src/relay/contract/events.ts): what other
// services learn at once when a session ends or a user goes. They travel on the one bus of the
// process (src/compose.ts), so the event stream and the webhooks carry them; they concern no router.
import { z } from 'zod';

/** Why a session ended. */
export const SESSION_END_REASONS = ['logout', 'revoked', 'password_changed', 'password_reset', 'reuse_detected', 'account_deleted', 'banned', 'email_changed'] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

const eventTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');
const eventId = z.string().describe('opaque; strictly increasing within one process, never repeated by another process lifetime');

function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S, description: string) {
  return z.object({ id: eventId, type: z.literal(type), time: eventTime, ...shape }).describe(description);
}

const userId = z.int().describe('the user id');

export const accountEventSchemas = {
  'auth.session.ended': event(
    'auth.session.ended',
    { userId, sessionId: z.string().describe("the session's public id (the `sid` of its access tokens)"), reason: z.enum(SESSION_END_REASONS) },
    "A session ended: its access and refresh tokens are refused from now on (drop the user's connections that it authenticated).",
  ),
  'auth.user.deleted': event('auth.user.deleted', { userId }, 'A user deleted the account (each session also gets auth.session.ended account_deleted).'),
  'auth.user.banned': event(
    'auth.user.banned',
    { userId, until: eventTime.nullable().describe('when the ban ends; null: until lifted'), reason: z.string().nullable() },
    'An operator banned a user (each session also gets auth.session.ended banned).',
  ),
  'auth.user.unbanned': event('auth.user.unbanned', { userId }, 'An operator lifted a ban.'),
  'auth.user.mfa_cleared': event(
    'auth.user.mfa_cleared',
    { userId, passkeys: z.int().min(0).describe('passkeys removed'), totp: z.boolean().describe('whether an enabled TOTP factor was removed') },
    "An operator removed every second factor of a user (TOTP, recovery codes, passkeys), after verifying the person by other means; the owner is mailed.",
  ),
} as const;

export type AccountEventType = keyof typeof accountEventSchemas;
export const ACCOUNT_EVENT_TYPES = Object.keys(accountEventSchemas) as AccountEventType[];

export const accountEventSchema = z.discriminatedUnion(
  'type',
  Object.values(accountEventSchemas) as unknown as [(typeof accountEventSchemas)[AccountEventType], ...(typeof accountEventSchemas)[AccountEventType][]],
);
export type AccountEvent = z.infer<typeof accountEventSchema>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** What the account area hands to the bus: the event without `id` and `time`. */
export type AccountEventInput = DistributiveOmit<AccountEvent, 'id' | 'time'>;

/** Where the account area's events go (the process's bus; nowhere when no bus is composed). */
export type AccountEventSink = (event: AccountEventInput) => void;
