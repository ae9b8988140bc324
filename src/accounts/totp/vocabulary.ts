// TOTP, recovery codes and the login's second step: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.
import { z } from 'zod';
import { SharedCode, type AccountErrorRow, type SecondFactorWords } from '../shared/vocabulary.js';

export const codes = {
  /** The password was right; the account asks for its second factor (data: mfa_token, methods). */
  MFA_REQUIRED: 2007,
  TOTP_STATE: 2011,
  INVALID_MFA_TOKEN: 2012,
  INVALID_MFA_CODE: 2013,
} as const;
const ApiCode = { ...SharedCode, ...codes };

/** The second factors a login's second step accepts. */
export const signInFactors = ['totp', 'recovery_code'] as const;

/** What 2007 answers: the login's second step. */
export const mfaChallengeData = z.strictObject({
  mfa_token: z.string().describe('the challenge for POST /login/mfa: single use, 5 minutes, 5 tries'),
  methods: z.array(z.enum(signInFactors)).describe('what POST /login/mfa accepts for this account'),
});

export const errors = {
  mfa_required: {
    code: ApiCode.MFA_REQUIRED,
    status: 401,
    message: 'second factor required',
    meaning: 'the password is right and the account has two-factor sign-in: no session yet; send data.mfa_token with a code to POST /login/mfa',
    data: mfaChallengeData,
  },
  totp_already_enabled: { code: ApiCode.TOTP_STATE, status: 409, message: 'two-factor sign-in is already enabled', meaning: 'TOTP is already enabled (disable it first)' },
  totp_not_set_up: {
    code: ApiCode.TOTP_STATE,
    status: 409,
    message: 'two-factor sign-in is not set up',
    meaning: 'no pending TOTP secret to enable (POST /mfa/totp/setup first), or TOTP is not enabled (nothing to disable)',
  },
  invalid_mfa_token: {
    code: ApiCode.INVALID_MFA_TOKEN,
    status: 401,
    message: 'the sign-in challenge is invalid, used or expired; log in again',
    meaning: 'mfa_token unknown, already used, older than 5 minutes, out of its 5 tries, sent by another client (User-Agent) than the login, or the password changed since it was issued; log in again',
  },
  invalid_mfa_code: { code: ApiCode.INVALID_MFA_CODE, status: 401, message: 'wrong or used code', meaning: 'the TOTP code is wrong or was already used, or the recovery code is wrong or used', guess: true },
  // The caller is authenticated; a wrong code refuses the action rather than the caller.
  wrong_mfa_code: { code: ApiCode.INVALID_MFA_CODE, status: 403, message: 'wrong or used code', meaning: 'the TOTP code (or, to disable, the recovery code) is wrong or was already used', guess: true },
} as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  'totp_enabled',
  'totp_disabled',
  'recovery_code_used',
  'mfa_failed',
] as const;

/** How a session was opened (a device's `method`) by the password and then this factor. */
export const signInMethods = ['password+totp', 'recovery_code'] as const;

/**
 * How a session is named that the second step opened after a first factor other than the password
 * (`first`, e.g. `oidc:<provider>`): `<first>+totp` or `<first>+recovery_code`.
 */
export function afterFirstFactor<const First extends z.core.$ZodTemplateLiteralPart>(first: First) {
  return z.templateLiteral([first, '+', z.enum(signInFactors)]).describe('the first factor, then the second step: a TOTP code (+totp) or a recovery code (+recovery_code)');
}

/** Its actions whose failures spend the account's failure budget (a 429's meaning names them). */
export const failureBudgetActions = ['the second step of a login', 'disabling TOTP'] as const;

/** How the texts that name every second factor name this one, and its fields when an operator clears them. */
export const secondFactor = {
  name: 'totp',
  parts: 'TOTP, recovery codes',
  named: 'two-factor sign-in',
  every: 'the two-factor sign-in (authenticator app and recovery codes)',
  adding: 'turning two-factor sign-in on',
  /** Its fields in the answer of DELETE /internal/v1/users/{id}/mfa and in auth.user.mfa_cleared, and their values from its count. */
  cleared: {
    answer: { totp_removed: z.boolean().describe('whether an enabled TOTP factor was removed (its recovery codes with it)') },
    event: { totp: z.boolean().describe('whether an enabled TOTP factor was removed') },
    values: (count: number) => ({ answer: { totp_removed: count > 0 }, event: { totp: count > 0 } }),
    eventOf: 'any',
  },
} as const satisfies SecondFactorWords;
