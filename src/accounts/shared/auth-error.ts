// The account area's failure: a kind of the one error table (contract/errors.ts), thrown by the
// services (which know nothing of HTTP) and by the area's HTTP layer; the /api onError answers it.
import { ACCOUNT_ERRORS, type AccountErrorKind } from './error-table.js';

export type AuthFailure = AccountErrorKind;

export class AuthError extends Error {
  constructor(
    readonly reason: AuthFailure,
    message: string = ACCOUNT_ERRORS[reason].message,
    /** Seconds, sent as Retry-After (for too_many_failures, source_throttled, mail_busy and server_busy). */
    readonly retryAfterS?: number,
    /** The answer's `data`, for the failures whose row declares some (account_banned's `until`). */
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}
