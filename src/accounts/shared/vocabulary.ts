// The vocabulary every account feature shares: the row of the error table, the envelope codes of any
// endpoint, the rows of failures no one feature owns. A leaf; src/accounts/vocabulary.ts assembles the features' parts.
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

/** The envelope codes: 0 for success, 1xxx for any endpoint, 2xxx for account rules. */
export const SharedCode = {
  OK: 0,
  INTERNAL: 1000,
  INVALID_REQUEST: 1001,
  UNAUTHENTICATED: 1002,
  RATE_LIMITED: 1003,
  NOT_FOUND: 1004,
  /** Too much password hashing queued: answered at once with Retry-After instead of a long wait. */
  SERVER_BUSY: 1005,
  WRONG_PASSWORD: 2003,
} as const;
const ApiCode = SharedCode;

export interface AccountErrorRow {
  code: number;
  status: ContentfulStatusCode;
  /** The answer's message unless the failure gives its own. */
  message: string;
  /** What it means, for the document. */
  meaning: string;
  /** The answer's `data` (null for every other failure). */
  data?: z.ZodType;
  /** A guess of a secret (a password, a code): it spends the account's failure budget (LoginGuard). */
  guess?: true;
}

export const INVALID_MEANING = 'a field fails its rule, malformed JSON, or a body over 64 KiB (413)';
/** The actions whose failures spend the account's failure budget, as a 429's meaning names them (features add theirs). */
export const failureBudgetActions = ['login', 'password change'] as const;

/** What a 429 means, given every action that spends the account's failure budget (in the list's order). */
export function rateLimitedMeaning(actions: readonly string[]): string {
  const named = actions.length > 1 ? `${actions.slice(0, -1).join(', ')} and ${actions.at(-1)}` : actions.join('');
  return `too many requests (per client; on ${named} also too many failures for the account (wrong passwords and codes count together); on password forgot and reset also the client address's hourly reset budget); Retry-After is set`;
}

/** The meanings the area's vocabulary assembles from every feature's part, for the rows that state them. */
export interface AssembledMeanings {
  /** Every 429. */
  rateLimited: string;
  /** Adding any second factor, as what needs a proved address: "adding a passkey or turning two-factor sign-in on". */
  addingFactors: string;
}

/**
 * The failures of any endpoint. The services throw `AuthError(kind)` (they know nothing of HTTP);
 * the HTTP layer throws the same for what it refuses (a body that is not JSON, a route that does not exist).
 */
export const errors = (meanings: AssembledMeanings) => ({
  internal: { code: ApiCode.INTERNAL, status: 500, message: 'internal error', meaning: 'internal error' },
  invalid_request: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'request: invalid', meaning: INVALID_MEANING },
  not_json: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'request body must be JSON (Content-Type: application/json)', meaning: INVALID_MEANING },
  malformed_json: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'request body is not valid JSON', meaning: INVALID_MEANING },
  body_too_large: { code: ApiCode.INVALID_REQUEST, status: 413, message: 'request body exceeds 64 KiB', meaning: INVALID_MEANING },
  // A new password the rules refuse is a field failure, like any other rule of the body.
  weak_password: { code: ApiCode.INVALID_REQUEST, status: 400, message: 'password: must not be a common password', meaning: 'new password too common, or equal to the username or e-mail' },
  unauthenticated: { code: ApiCode.UNAUTHENTICATED, status: 401, message: 'missing or invalid access token', meaning: 'access token missing, malformed, expired or revoked' },
  invalid_access_token: { code: ApiCode.UNAUTHENTICATED, status: 401, message: 'access token is invalid, expired or revoked', meaning: 'access token missing, malformed, expired or revoked' },
  rate_limited: { code: ApiCode.RATE_LIMITED, status: 429, message: 'too many requests, retry later', meaning: meanings.rateLimited },
  too_many_failures: { code: ApiCode.RATE_LIMITED, status: 429, message: 'too many failed attempts for this account, retry later', meaning: meanings.rateLimited },
  no_such_route: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such route', meaning: 'no such route' },
  method_not_allowed: { code: ApiCode.NOT_FOUND, status: 405, message: 'method not allowed', meaning: 'the path exists, not with this method; Allow lists its methods' },
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
  // The caller is authenticated; a wrong old password refuses the action rather than the caller.
  wrong_old_password: { code: ApiCode.WRONG_PASSWORD, status: 403, message: 'old_password is wrong', meaning: 'old_password is wrong', guess: true },
}) as const satisfies Record<string, AccountErrorRow>;

/**
 * How a second factor is named by the texts that name every one of them (an operator's clearing, a
 * reset of an address never proved, what needs a proved address); each factor gives its words in
 * its vocabulary, and src/accounts/vocabulary.ts lists the factors.
 */
export interface SecondFactorWords {
  /** Its name among a removal's counts (its FactorRemoval's `name`). */
  name: string;
  /** What is removed, as a list of parts: "TOTP, recovery codes". */
  parts: string;
  /** Its short name: "two-factor sign-in". */
  named: string;
  /** All of it, in a sentence on what was removed: "the two-factor sign-in (authenticator app and recovery codes)". */
  every: string;
  /** Adding it, which needs a proved address: "turning two-factor sign-in on". */
  adding: string;
  /** Its fields in the answer and in the event of an operator's clearing (schemas), and their values from its count. */
  cleared: {
    answer: z.ZodRawShape;
    event: z.ZodRawShape;
    values(count: number): { answer: Record<string, unknown>; event: Record<string, unknown> };
  };
}

/** Every second factor removed: by a reset of an unverified address, or by an operator. */
export const auditTypes = ['mfa_cleared'] as const;

/** Why a session ended, as auth.session.ended says it (the area's reasons; features add theirs). */
export const sessionEndReasons = ['logout', 'revoked', 'password_changed', 'password_reset', 'reuse_detected', 'account_deleted', 'banned'] as const;

/** Who ended a session (session_ended's `detail`) and the reason its bus event gives. */
export const sessionEndedBy = {
  user: 'logout',
  password_change: 'password_changed',
  password_reset: 'password_reset',
  account_deletion: 'account_deleted',
  refresh_reuse: 'reuse_detected',
  session_limit: 'revoked',
  ban: 'banned',
} as const;
