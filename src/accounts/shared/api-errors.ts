// Turns anything thrown under /api into the envelope, from the one error table; a 500 never echoes
// an internal message.
import type { Context } from 'hono';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../../logger.js';
import { ACCOUNT_ERRORS, type AccountErrorKind } from './error-table.js';
import { AuthError } from './auth-error.js';
import { ApiError, envelopeError } from './envelope.js';

/** What Hono's own middleware throw (body limit, JSON parsing, the body's media type) as kinds of the table. */
const HTTP_EXCEPTIONS: Partial<Record<number, AccountErrorKind>> = {
  400: 'malformed_json',
  401: 'unauthenticated',
  404: 'no_such_route',
  413: 'body_too_large',
  // @hono/zod-openapi's gate refuses a body whose media type the route does not declare.
  415: 'not_json',
  429: 'rate_limited',
};

/** The answer of a failure of the table, with its headers (WWW-Authenticate for a bad access token, Retry-After). */
export function answerOf(error: AuthError): ApiError {
  const { code, status } = ACCOUNT_ERRORS[error.reason];
  const headers: Record<string, string> = error.reason === 'invalid_access_token' ? { 'WWW-Authenticate': 'Bearer realm="api"' } : {};
  if (error.retryAfterS !== undefined) headers['Retry-After'] = String(error.retryAfterS);
  return new ApiError(code, error.message, status, headers, error.data);
}

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof AuthError) return answerOf(error);
  if (error instanceof HTTPException) {
    const kind = HTTP_EXCEPTIONS[error.status];
    if (kind) return answerOf(new AuthError(kind));
  }
  return undefined;
}

export function handleApiError(error: unknown, c: Context, logger: Logger) {
  const known = toApiError(error);
  if (known) return envelopeError(c, known);
  logger.error({ err: loggable(error), requestId: c.get('requestId') }, 'unhandled error in account API');
  return envelopeError(c, answerOf(new AuthError('internal')));
}

/** A failed query's parameters can hold password hashes and token digests: log the query and the cause only. */
function loggable(error: unknown): unknown {
  if (!(error instanceof DrizzleQueryError)) return error;
  const safe = new Error(`Failed query: ${error.query}`, { cause: error.cause });
  safe.name = 'DrizzleQueryError';
  // The original stack's head repeats the message, parameters included: keep only its frames.
  const frames = (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
  safe.stack = [`${safe.name}: ${safe.message}`, ...frames].join('\n');
  return safe;
}
