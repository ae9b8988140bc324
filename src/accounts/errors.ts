// The account service's failures, and the one table that gives each its envelope code and HTTP status.
import { ApiCode, ApiError } from './http/envelope.js';

export type AuthFailure =
  | 'username_taken'
  | 'email_taken'
  | 'no_such_account'
  | 'wrong_password'
  | 'wrong_old_password'
  | 'invalid_access_token'
  | 'invalid_refresh_token'
  | 'weak_password'
  | 'no_such_session'
  | 'invalid_reset_code'
  | 'mail_disabled'
  | 'too_many_failures'
  | 'source_throttled'
  | 'mail_busy'
  | 'server_busy';

/** Thrown by the service (which knows nothing of HTTP); the /api onError maps it with toApiError. */
export class AuthError extends Error {
  constructor(
    readonly reason: AuthFailure,
    message: string = DEFAULT_MESSAGES[reason],
    /** Seconds, sent as Retry-After (for too_many_failures, source_throttled, mail_busy and server_busy). */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}

const DEFAULT_MESSAGES: Record<AuthFailure, string> = {
  username_taken: 'username is already taken',
  email_taken: 'e-mail address is already registered',
  no_such_account: 'no account with that username or e-mail address',
  wrong_password: 'wrong password',
  wrong_old_password: 'old_password is wrong',
  invalid_access_token: 'access token is invalid, expired or revoked',
  invalid_refresh_token: 'refresh token is invalid, expired or revoked',
  weak_password: 'password: must not be a common password',
  no_such_session: 'no such session',
  invalid_reset_code: 'the code is wrong, used or expired; ask for a new one',
  mail_disabled: 'password reset is not available: mail is not configured',
  too_many_failures: 'too many failed attempts for this account, retry later',
  source_throttled: 'too many password reset attempts from this address, retry later',
  mail_busy: 'too much mail queued to send a code now, retry later',
  server_busy: 'server busy, retry later',
};

const RESPONSES = {
  username_taken: [ApiCode.USERNAME_TAKEN, 409],
  email_taken: [ApiCode.EMAIL_TAKEN, 409],
  no_such_account: [ApiCode.NO_SUCH_ACCOUNT, 401],
  wrong_password: [ApiCode.WRONG_PASSWORD, 401],
  // The caller is authenticated; a wrong old password refuses the action rather than the caller.
  wrong_old_password: [ApiCode.WRONG_PASSWORD, 403],
  invalid_access_token: [ApiCode.UNAUTHENTICATED, 401],
  invalid_refresh_token: [ApiCode.UNAUTHENTICATED, 401],
  // A new password the rules refuse is a field failure, like any other rule of the body.
  weak_password: [ApiCode.INVALID_REQUEST, 400],
  // Another user's session answers exactly like an unknown one.
  no_such_session: [ApiCode.NOT_FOUND, 404],
  invalid_reset_code: [ApiCode.INVALID_RESET_CODE, 400],
  // In production without SMTP_URL the reset endpoints do not exist.
  mail_disabled: [ApiCode.NOT_FOUND, 404],
  too_many_failures: [ApiCode.RATE_LIMITED, 429],
  // A per-client budget of the password reset endpoints: tied to the requester, decided before the
  // e-mail address is looked up, so it says nothing about the address.
  source_throttled: [ApiCode.RATE_LIMITED, 429],
  server_busy: [ApiCode.SERVER_BUSY, 503],
  // The code queue is full: the request is refused rather than answered 0 without a mail; decided
  // before the e-mail address is looked up, so it says nothing about the address.
  mail_busy: [ApiCode.SERVER_BUSY, 503],
} as const satisfies Record<AuthFailure, readonly [ApiCode, number]>;

export function authErrorToApiError(error: AuthError): ApiError {
  const [code, status] = RESPONSES[error.reason];
  const headers: Record<string, string> =
    error.reason === 'invalid_access_token' ? { 'WWW-Authenticate': 'Bearer realm="api"' } : {};
  if (error.retryAfterS !== undefined) headers['Retry-After'] = String(error.retryAfterS);
  return new ApiError(code, error.message, status, headers);
}
