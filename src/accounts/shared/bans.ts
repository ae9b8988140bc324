// Whether an operator's ban holds at an instant, and the failure that says so.
import { formatTime } from '../../time.js';
import type { User } from '../types.js';
import { AuthError } from './auth-error.js';

/** Whether the user is banned at `now`: banned_at set and no end, or an end still ahead. */
export function isBanned(user: Pick<User, 'bannedAt' | 'bannedUntil'>, now: Date): boolean {
  return user.bannedAt !== null && (user.bannedUntil === null || user.bannedUntil.getTime() > now.getTime());
}

/** AuthError `account_banned` (2006, with `until`) when the user is banned at `now`. */
export function assertNotBanned(user: Pick<User, 'bannedAt' | 'bannedUntil'>, now: Date): void {
  if (isBanned(user, now)) throw new AuthError('account_banned', undefined, undefined, { until: user.bannedUntil ? formatTime(user.bannedUntil) : null });
}
