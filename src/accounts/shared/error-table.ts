// The account API's failures: ONE table giving each its envelope code, HTTP status, the message it
// answers with by default and what it means for a client. The /api error handler answers from it,
// the routes declare their error responses from it (so the OpenAPI document does), tests read it.
import { z } from 'zod';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The envelope codes: 0 for success, 1xxx for any endpoint, 2xxx for account rules. */
export const ApiCode = {
  OK: 0,
  INTERNAL: 1000,
  INVALID_REQUEST: 1001,
  UNAUTHENTICATED: 1002,
  RATE_LIMITED: 1003,
  NOT_FOUND: 1004,
  /** Too much password hashing queued: answered at once with Retry-After instead of a long wait. */
  SERVER_BUSY: 1005,
  USERNAME_TAKEN: 2001,
  EMAIL_TAKEN: 2002,
  WRONG_PASSWORD: 2003,
  NO_SUCH_ACCOUNT: 2004,
  INVALID_RESET_CODE: 2005,
  /** The account is banned by an operator; answered only after the password verified. */
  ACCOUNT_BANNED: 2006,
  // Issue 31, verified e-mail and changing the address.
  /** An e-mail code (verification or address change) wrong, used, retired or expired. */
  INVALID_EMAIL_CODE: 2008,
  /** The address is verified already: nothing to verify, no code to send. */
  EMAIL_ALREADY_VERIFIED: 2009,
  /** new_email is the account's address already. */
  SAME_EMAIL: 2010,
  // issue 31, totp: the second factor.
  /** The password was right; the account asks for its second factor (data: mfa_token, methods). */
  MFA_REQUIRED: 2007,
  TOTP_STATE: 2011,
  INVALID_MFA_TOKEN: 2012,
  INVALID_MFA_CODE: 2013,
  // Passkeys (issue 31): 2014-2016.
  /** A passkey ceremony's response did not verify (challenge, origin, RP ID, signature, counter or credential). */
  PASSKEY_REFUSED: 2014,
  /** The account has MAX_PASSKEYS_PER_USER passkeys already. */
  PASSKEY_LIMIT: 2015,
  /** That authenticator's credential is registered already. */
  PASSKEY_EXISTS: 2016,
  /** The session signed in or re-authenticated too long ago (REAUTH_WINDOW_S) for this action: POST /reauth first. */
  REAUTH_REQUIRED: 2017,
  /** The action needs a verified e-mail address (POST /email/verify first). */
  EMAIL_NOT_VERIFIED: 2018,
} as const;
export type ApiCode = (typeof ApiCode)[keyof typeof ApiCode];

export interface AccountErrorRow {
  code: ApiCode;
  status: ContentfulStatusCode;
  /** The answer's message unless the failure gives its own. */
  message: string;
  /** What it means, for the document. */
  meaning: string;
  /** The answer's `data` (null for every other failure). */
  data?: z.ZodType;
}

/** `until` of a ban: yyyy-MM-dd HH:mm:ss (Asia/Shanghai), null for a ban until lifted. */
const banData = z.strictObject({
  until: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    .nullable()
    .describe('when the ban ends (yyyy-MM-dd HH:mm:ss, Asia/Shanghai); null: until an operator lifts it'),
});

/** What 2007 answers: the login's second step. */
export const mfaChallengeData = z.strictObject({
  mfa_token: z.string().describe('the challenge for POST /login/mfa: single use, 5 minutes, 5 tries'),
  // The passkeys work adds "passkey" here when it is merged (a passkey login satisfies the second factor).
  methods: z.array(z.enum(['totp', 'recovery_code'])).describe('what POST /login/mfa accepts for this account'),
});

const INVALID_MEANING = 'a field fails its rule, malformed JSON, or a body over 64 KiB (413)';
const RATE_LIMITED_MEANING =
  "too many requests (per client; on login, password change, the second step of a login and disabling TOTP also too many failures for the account (wrong passwords and codes count together); on password forgot and reset also the client address's hourly reset budget); Retry-After is set";

/**
 * Every failure of the area by kind. The services throw `AuthError(kind)` (they know nothing of
 * HTTP); the HTTP layer throws the same for what it refuses (a body that is not JSON, a route
 * that does not exist).
 */
export const ACCOUNT_ERRORS = {
  internal: { code: ApiCode.INTERNAL, status: 500, message: 'internal error', meaning: 'internal error' },
  invalid_request: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'request: invalid', meaning: INVALID_MEANING },
  not_json: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'request body must be JSON (Content-Type: application/json)', meaning: INVALID_MEANING },
  malformed_json: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'request body is not valid JSON', meaning: INVALID_MEANING },
  body_too_large: { code: ApiCode.INVALID_REQUEST, status: 413, message: 'request body exceeds 64 KiB', meaning: INVALID_MEANING },
  // A new password the rules refuse is a field failure, like any other rule of the body.
  weak_password: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'password: must not be a common password', meaning: 'new password too common, or equal to the username or e-mail' },
  unauthenticated: { code: ApiCode.UNAUTHENTICATED, status: 401, message: 'missing or invalid access token', meaning: 'access token missing, malformed, expired or revoked' },
  invalid_access_token: { code: ApiCode.UNAUTHENTICATED, status: 401, message: 'access token is invalid, expired or revoked', meaning: 'access token missing, malformed, expired or revoked' },
  invalid_refresh_token: {
    code: ApiCode.UNAUTHENTICATED,
    status: 401,
    message: 'refresh token is invalid, expired or revoked',
    meaning: 'refresh token missing, malformed, expired, revoked or reused (reuse after the REFRESH_REUSE_GRACE_S grace period revokes the session)',
  },
  rate_limited: { code: ApiCode.RATE_LIMITED, status: 429, message: 'too many requests, retry later', meaning: RATE_LIMITED_MEANING },
  too_many_failures: { code: ApiCode.RATE_LIMITED, status: 429, message: 'too many failed attempts for this account, retry later', meaning: RATE_LIMITED_MEANING },
  // A per-client budget of the password reset endpoints: tied to the requester, decided before the
  // e-mail address is looked up, so it says nothing about the address.
  source_throttled: { code: ApiCode.RATE_LIMITED, status: 429, message: 'too many password reset attempts from this address, retry later', meaning: RATE_LIMITED_MEANING },
  no_such_route: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such route', meaning: 'no such route' },
  method_not_allowed: { code: ApiCode.NOT_FOUND, status: 405, message: 'method not allowed', meaning: 'the path exists, not with this method; Allow lists its methods' },
  // Another user's session answers exactly like an unknown one.
  no_such_session: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such session', meaning: "no such session (another user's session answers the same)" },
  // In production without SMTP_URL the reset endpoints do not exist.
  mail_disabled: { code: ApiCode.NOT_FOUND, status: 404, message: 'password reset is not available: mail is not configured', meaning: 'password reset is not available (production without SMTP_URL)' },
  server_busy: { code: ApiCode.SERVER_BUSY, status: 503, message: 'server busy, retry later', meaning: 'too much password hashing queued; Retry-After is set, nothing was done' },
  // The code queue is full: the request is refused rather than answered 0 without a mail; decided
  // before the e-mail address is looked up, so it says nothing about the address.
  mail_busy: {
    code: ApiCode.SERVER_BUSY,
    status: 503,
    message: 'too much mail queued to send a code now, retry later',
    meaning: 'the queue of codes to mail is full (decided before the address is looked up); Retry-After is set, nothing was issued',
  },
  username_taken: { code: ApiCode.USERNAME_TAKEN, status: 409, message: 'username is already taken', meaning: 'username already taken' },
  email_taken: { code: ApiCode.EMAIL_TAKEN, status: 409, message: 'e-mail address is already registered', meaning: 'e-mail already registered' },
  wrong_password: { code: ApiCode.WRONG_PASSWORD, status: 401, message: 'wrong password', meaning: 'wrong password' },
  // The caller is authenticated; a wrong old password refuses the action rather than the caller.
  wrong_old_password: { code: ApiCode.WRONG_PASSWORD, status: 403, message: 'old_password is wrong', meaning: 'old_password is wrong' },
  no_such_account: { code: ApiCode.NO_SUCH_ACCOUNT, status: 401, message: 'no account with that username or e-mail address', meaning: 'no account with that username or e-mail' },
  account_banned: {
    code: ApiCode.ACCOUNT_BANNED,
    status: 403,
    message: 'this account is banned',
    meaning: 'the account is banned (answered only once the password verified; a wrong password is still 2003); data.until tells when the ban ends, null: until lifted',
    data: banData,
  },
  invalid_reset_code: {
    code: ApiCode.INVALID_RESET_CODE,
    status: 400,
    message: 'the code is wrong, used or expired; ask for a new one',
    meaning: 'the code is wrong, used, revoked by a password change, expired (15 min) or out of tries; ask for a new one',
  },
  // ---------------------------------------------------------------- issue 31: verified e-mail
  invalid_email_code: {
    code: ApiCode.INVALID_EMAIL_CODE,
    status: 400,
    message: 'the code is wrong, used or expired; ask for a new one',
    meaning: 'the e-mail code is wrong, used, replaced by a newer one, expired (15 min) or out of tries (5); ask for a new one',
  },
  email_already_verified: { code: ApiCode.EMAIL_ALREADY_VERIFIED, status: 409, message: 'the e-mail address is already verified', meaning: 'the address is verified already: nothing to do' },
  same_email: { code: ApiCode.SAME_EMAIL, status: 409, message: "new_email is already the account's address", meaning: "new_email is the account's address already" },
  // ---- issue 31, totp: TOTP, recovery codes and the login's second step (2007, 2011-2013)
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
  invalid_mfa_code: { code: ApiCode.INVALID_MFA_CODE, status: 401, message: 'wrong or used code', meaning: 'the TOTP code is wrong or was already used, or the recovery code is wrong or used' },
  // The caller is authenticated; a wrong code refuses the action rather than the caller.
  wrong_mfa_code: { code: ApiCode.INVALID_MFA_CODE, status: 403, message: 'wrong or used code', meaning: 'the TOTP code (or, to disable, the recovery code) is wrong or was already used' },
  // ---------------------------------------------------------------- passkeys (issue 31)
  // Which check failed is audited (passkey_login_failed), never answered: one code for all.
  passkey_login_refused: {
    code: ApiCode.PASSKEY_REFUSED,
    status: 401,
    message: 'the passkey could not be verified; ask for new options and try again',
    meaning: 'the assertion did not verify: challenge unknown, used or expired (5 min), origin or RP ID not allowed, unknown credential, bad signature, or a signature counter that went back (a cloned authenticator)',
  },
  passkey_registration_refused: {
    code: ApiCode.PASSKEY_REFUSED,
    status: 400,
    message: 'the new passkey could not be verified; ask for new options and try again',
    meaning: 'the attestation did not verify: challenge unknown, used, expired (5 min) or issued to another user, origin or RP ID not allowed, or the key out of bounds',
  },
  passkey_limit: { code: ApiCode.PASSKEY_LIMIT, status: 409, message: 'this account has the most passkeys allowed; remove one first', meaning: 'the account has 20 passkeys already' },
  passkey_exists: { code: ApiCode.PASSKEY_EXISTS, status: 409, message: 'this passkey is registered already', meaning: "the authenticator's credential is registered already (to this or another account)" },
  no_such_passkey: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such passkey', meaning: "no such passkey (another user's passkey answers the same)" },
  // The re-authentication an action asks for: one factor again through POST /reauth.
  passkey_reauth_refused: {
    code: ApiCode.PASSKEY_REFUSED,
    status: 403,
    message: 'the passkey could not be verified; ask for new options and try again',
    meaning: "the assertion did not verify, or is not of one of the caller's own passkeys (challenge unknown, used, expired or issued to another session's user, origin, RP ID, signature or counter)",
  },
  reauthentication_required: {
    code: ApiCode.REAUTH_REQUIRED,
    status: 403,
    message: 'sign in again or re-authenticate (POST /reauth) first',
    meaning: 'the session signed in or re-authenticated longer than REAUTH_WINDOW_S (300 s) ago: prove a factor again with POST /reauth, then repeat the request',
  },
  email_not_verified: {
    code: ApiCode.EMAIL_NOT_VERIFIED,
    status: 403,
    message: 'verify your e-mail address first',
    meaning: 'adding a passkey or turning two-factor sign-in on needs a verified e-mail address (POST /email/verify)',
  },
  // Production without WEBAUTHN_RP_ID: the passkey endpoints do not exist.
  passkeys_disabled: { code: ApiCode.NOT_FOUND, status: 404, message: 'passkeys are not available: WEBAUTHN_RP_ID is not configured', meaning: 'passkeys are not configured (production without WEBAUTHN_RP_ID)' },
} as const satisfies Record<string, AccountErrorRow>;

export type AccountErrorKind = keyof typeof ACCOUNT_ERRORS;

/** Every answer but a success: a non-zero code, a message, no data. */
export const errorEnvelope = z.strictObject({ code: z.int().describe('non-zero error code'), message: z.string(), data: z.null() });

/** The envelope of a status some of whose failures carry data (2006's `until`). */
const errorEnvelopeWith = (data: z.ZodType) => z.strictObject({ code: z.int().describe('non-zero error code'), message: z.string(), data: z.union([data, z.null()]) });

/** An error response a route declares: a kind of the table, or a kind with what it means on that route. */
export type ErrorRow = AccountErrorKind | readonly [AccountErrorKind, string];

/**
 * The error responses of a route for createRoute's `responses`, grouped by status, each status
 * described by its codes and meanings, with one example per code.
 * @example errorResponses(['invalid_request', 'username_taken', ['email_taken', 'e-mail already registered']])
 */
export function errorResponses(rows: readonly ErrorRow[]) {
  const byStatus = new Map<number, Array<{ code: number; meaning: string; data?: z.ZodType }>>();
  for (const row of rows) {
    const [kind, meaning] = typeof row === 'string' ? [row, undefined] : row;
    const entry: AccountErrorRow = ACCOUNT_ERRORS[kind];
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), { code: entry.code, meaning: meaning ?? entry.meaning, ...(entry.data ? { data: entry.data } : {}) }]);
  }
  const responses: Record<number, { description: string; content: { 'application/json': { schema: z.ZodType; examples: Record<string, { value: unknown }> } } }> = {};
  for (const [status, list] of byStatus) {
    const data = list.find((entry) => entry.data)?.data;
    responses[status] = {
      description: list.map(({ code, meaning }) => `${code}: ${meaning}`).join('; '),
      content: {
        'application/json': {
          schema: data ? errorEnvelopeWith(data) : errorEnvelope,
          examples: Object.fromEntries(list.map(({ code, meaning }) => [String(code), { value: { code, message: meaning, data: null } }])),
        },
      },
    };
  }
  return responses;
}

/**
 * errorResponses as a module's document part states them (the document's own JSON, not schemas
 * for a route to generate from): for the responses every operation of a surface may give.
 */
export function errorResponsesAsJson(rows: readonly ErrorRow[]): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(errorEnvelope, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(errorResponses(rows)).map(([status, response]) => [status, { ...response, content: { 'application/json': { ...response.content['application/json'], schema } } }]),
  );
}
