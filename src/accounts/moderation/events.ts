// Operators' events on the bus: a ban, its lifting, the clearing of a user's second factors.
import { z } from 'zod';
import { event, eventTime, userId } from '../shared/event-kit.js';

export const moderationEvents = {
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
