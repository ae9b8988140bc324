// Operators' events on the bus: a ban, its lifting, the clearing of a user's second factors.
import { z } from 'zod';
import { event, eventTime, userId } from '../shared/event-kit.js';
import { CLEARED_FACTOR_FIELDS, secondFactorsSaid } from '../vocabulary.js';

export const moderationEvents = {
  'auth.user.banned': event(
    'auth.user.banned',
    { userId, until: eventTime.nullable().describe('when the ban ends; null: until lifted'), reason: z.string().nullable() },
    'An operator banned a user (each session also gets auth.session.ended banned).',
  ),
  'auth.user.unbanned': event('auth.user.unbanned', { userId }, 'An operator lifted a ban.'),
  'auth.user.mfa_cleared': event(
    'auth.user.mfa_cleared',
    { userId, ...CLEARED_FACTOR_FIELDS.event },
    `An operator removed every second factor of a user (${secondFactorsSaid('parts', ', ', 'lastFirst')}), after verifying the person by other means; the owner is mailed.`,
  ),
} as const;
