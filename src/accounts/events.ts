// The account area's event catalog, beside the relay's (src/relay/contract/events.ts): what other
// services learn at once when a session ends or a user goes (features add theirs, as moderation's
// events.ts). Each is written to the event log by the statement that makes the change it reports
// (shared/account-events.ts), so the event stream and the webhooks carry them; they concern no router.
import { z } from 'zod';
import { event, userId } from './shared/event-kit.js';
import { moderationEvents } from './moderation/events.js';
import { oidcEvents } from './oidc/events.js';
import { SESSION_END_REASONS } from './vocabulary.js';

export { SESSION_END_REASONS, type SessionEndReason } from './vocabulary.js';

export const accountEventSchemas = {
  'auth.session.ended': event(
    'auth.session.ended',
    { userId, sessionId: z.string().describe("the session's public id (the `sid` of its access tokens)"), reason: z.enum(SESSION_END_REASONS) },
    "A session ended: its access and refresh tokens are refused from now on (drop the user's connections that it authenticated).",
  ),
  'auth.user.deleted': event('auth.user.deleted', { userId }, 'A user deleted the account (each session also gets auth.session.ended account_deleted).'),
  ...moderationEvents,
  ...oidcEvents,
} as const;

export type AccountEventType = keyof typeof accountEventSchemas;
export const ACCOUNT_EVENT_TYPES = Object.keys(accountEventSchemas) as AccountEventType[];

export const accountEventSchema = z.discriminatedUnion(
  'type',
  Object.values(accountEventSchemas) as unknown as [(typeof accountEventSchemas)[AccountEventType], ...(typeof accountEventSchemas)[AccountEventType][]],
);
export type AccountEvent = z.infer<typeof accountEventSchema>;
