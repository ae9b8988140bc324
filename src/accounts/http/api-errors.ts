// Turns anything thrown under /api into the envelope; a 500 never echoes an internal message.
import type { Context } from 'hono';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { HTTPException } from 'hono/http-exception';
import { AuthError, authErrorToApiError } from '../errors.js';
import type { Logger } from '../../logger.js';
import { ApiCode, ApiError, envelopeError } from './envelope.js';

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof AuthError) return authErrorToApiError(error);
  if (error instanceof HTTPException) {
    if (error.status === 413) return new ApiError(ApiCode.INVALID_REQUEST, 'request body exceeds 64 KiB', 413);
    if (error.status === 400) return new ApiError(ApiCode.INVALID_REQUEST, 'request body is not valid JSON', 400);
    if (error.status === 401) return new ApiError(ApiCode.UNAUTHENTICATED, 'missing or invalid access token', 401);
    if (error.status === 429) return new ApiError(ApiCode.RATE_LIMITED, 'too many requests, retry later', 429);
    if (error.status === 404) return new ApiError(ApiCode.NOT_FOUND, 'no such route', 404);
  }
  return undefined;
}

export function handleApiError(error: unknown, c: Context, logger: Logger) {
  const known = toApiError(error);
  if (known) return envelopeError(c, known);
  logger.error({ err: loggable(error), requestId: c.get('requestId') }, 'unhandled error in account API');
  return envelopeError(c, new ApiError(ApiCode.INTERNAL, 'internal error', 500));
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
