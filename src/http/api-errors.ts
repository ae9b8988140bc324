// Turns anything thrown under /api into the envelope; a 500 never echoes an internal message.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../logger.js';
import { ApiCode, ApiError, envelopeError } from './envelope.js';

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
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
  logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error in account API');
  return envelopeError(c, new ApiError(ApiCode.INTERNAL, 'internal error', 500));
}
