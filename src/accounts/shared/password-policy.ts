// Rules for a new password beyond its length (register, change, reset): not one of the 10,000 most
// common passwords (ASVS 6.2.4), and not the account's own username or e-mail address.
import { dictionary } from '@zxcvbn-ts/language-common';
import { AuthError } from './auth-error.js';

/**
 * The first 10,000 entries of `passwords-common` from @zxcvbn-ts/language-common: the passwords
 * most often seen in public breach corpora, ranked by frequency (the list zxcvbn itself uses).
 * Compared lower-cased: "Password1" is as weak as "password1".
 */
export const COMMON_PASSWORD_COUNT = 10_000;
const common = new Set(dictionary['passwords-common'].slice(0, COMMON_PASSWORD_COUNT).map((p) => p.toLowerCase()));

export function isCommonPassword(password: string): boolean {
  return common.has(password.toLowerCase());
}

/**
 * Throws AuthError `weak_password` (1001) naming `field` when the new password breaks a rule.
 * @example assertAcceptablePassword('new_password', body.new_password, { username, email })
 */
export function assertAcceptablePassword(field: string, password: string, account: { username: string; email: string }): void {
  if (isCommonPassword(password)) throw new AuthError('weak_password', `${field}: must not be one of the 10,000 most common passwords`);
  const lower = password.toLowerCase();
  if (lower === account.username.toLowerCase() || lower === account.email.toLowerCase()) {
    throw new AuthError('weak_password', `${field}: must differ from the username and the e-mail address`);
  }
}
