// The "your password was changed" notices (by a change or a reset), and the reset's own variant.
import type { Folded } from '../../mail/notice-throttle.js';
import { secondFactorsSaid } from '../vocabulary.js';

/** The notice kind of a reset that removed the sign-in factors of an unproved address (see resetWithCode). */
export const PASSWORD_RESET_FACTORS_REMOVED = 'password_reset_factors_removed';

/**
 * The "your password was changed" notice, or the summary of those folded into one window. With
 * `factorsRemoved`: a reset that also removed every second factor, and says why.
 */
export function passwordChangedNotice(to: string, at: Date, folded?: Folded, factorsRemoved = false) {
  const time = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  if (factorsRemoved) {
    return {
      to,
      subject: `Password reset: ${secondFactorsSaid('named', ' and ')} removed`,
      text: [
        `The password of your chat account was reset on ${time(folded?.last ?? at)} with a code mailed to this address.`,
        '',
        `This address had not been verified before, so whoever used the account until now never proved it: ${secondFactorsSaid('every', ' and ')} of the account were removed, and every session was ended.`,
        '',
        `Sign in with the new password and add your own ${secondFactorsSaid('named', ' or ')} again. If this was not you, reset your password now with "forgot password".`,
      ].join('\n'),
    };
  }
  if (folded) {
    return {
      to,
      subject: 'Your password was changed',
      text: [
        folded.count === 1
          ? `The password of your chat account was changed again on ${time(folded.last)}.`
          : `The password of your chat account was changed ${folded.count} more times between ${time(folded.first)} and ${time(folded.last)}.`,
        '',
        '(Notices of password changes are sent at most once every 10 minutes; this one sums up the changes since the last.)',
        '',
        'If this was not you, reset your password now with "forgot password" and check your signed-in devices.',
      ].join('\n'),
    };
  }
  return {
    to,
    subject: 'Your password was changed',
    text: [
      `The password of your chat account was changed on ${time(at)}.`,
      '',
      'If this was not you, reset your password now with "forgot password" and check your signed-in devices.',
    ].join('\n'),
  };
}
