// Sign-up, sign-in and sessions: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.
import { z } from 'zod';
import { SharedCode, type AccountErrorRow } from '../shared/vocabulary.js';

export const codes = {
  USERNAME_TAKEN: 2001,
  EMAIL_TAKEN: 2002,
  NO_SUCH_ACCOUNT: 2004,
  /** The account is banned by an operator; answered only after the password verified. */
  ACCOUNT_BANNED: 2006,
} as const;
const ApiCode = { ...SharedCode, ...codes };

/** `until` of a ban: yyyy-MM-dd HH:mm:ss (Asia/Shanghai), null for a ban until lifted. */
const banData = z.strictObject({
  until: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    .nullable()
    .describe('when the ban ends (yyyy-MM-dd HH:mm:ss, Asia/Shanghai); null: until an operator lifts it'),
});

export const errors = {
  invalid_refresh_token: {
    code: ApiCode.UNAUTHENTICATED,
    status: 401,
    message: 'refresh token is invalid, expired or revoked',
    meaning: 'refresh token missing, malformed, expired, revoked or reused (reuse after the REFRESH_REUSE_GRACE_S grace period revokes the session)',
  },
  username_taken: { code: ApiCode.USERNAME_TAKEN, status: 409, message: 'username is already taken', meaning: 'username already taken' },
  email_taken: { code: ApiCode.EMAIL_TAKEN, status: 409, message: 'e-mail address is already registered', meaning: 'e-mail already registered' },
  wrong_password: { code: ApiCode.WRONG_PASSWORD, status: 401, message: 'wrong password', meaning: 'wrong password', guess: true },
  no_such_account: { code: ApiCode.NO_SUCH_ACCOUNT, status: 401, message: 'no account with that username or e-mail address', meaning: 'no account with that username or e-mail', guess: true },
  account_banned: {
    code: ApiCode.ACCOUNT_BANNED,
    status: 403,
    message: 'this account is banned',
    meaning: 'the account is banned (answered only once the password verified; a wrong password is still 2003); data.until tells when the ban ends, null: until lifted',
    data: banData,
  },
} as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  'registered',
  'login_succeeded',
  'login_failed',
  'refresh_reuse_detected',
  'session_ended',
] as const;

/** How a session was opened (a device's `method`). */
export const signInMethods = ['password'] as const;
