// The internal face's error shape `{code, message, details?}`, shared by every module served under
// /internal (the relay, the audit trail, operations). Areas add their own codes by subclassing.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from '../logger.js';

export interface InternalErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export class InternalError extends Error {
  constructor(
    readonly code: string,
    readonly status: ContentfulStatusCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'InternalError';
  }

  toBody(): InternalErrorBody {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export interface ValidationIssue {
  path: string;
  message: string;
}

export function internalValidationError(issues: ValidationIssue[], message = 'invalid request body'): InternalError {
  return new InternalError('VALIDATION_ERROR', 400, message, { issues });
}

/** An unknown path under /internal (`GET /internal/nope`). */
export function routeNotFound(method: string, path: string): InternalError {
  const id = `${method} ${path}`;
  return new InternalError('NOT_FOUND', 404, `route not found: ${id}`, { resource: 'route', id });
}

/** An InternalError, or what a Hono middleware threw (body limit, malformed JSON, token guard) as one. */
export function toInternalError(error: unknown): InternalError | undefined {
  if (error instanceof InternalError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 413) return new InternalError('VALIDATION_ERROR', 400, 'request body too large', { issues: [{ path: '', message: 'body too large' }] });
    if (error.status === 400) return internalValidationError([{ path: '', message: 'malformed JSON' }], 'request body is not valid JSON');
    if (error.status === 401) return new InternalError('UNAUTHORIZED', 401, 'missing or invalid internal token');
    // A body whose Content-Type the operation does not take (@hono/zod-openapi's media-type gate).
    if (error.status === 415) return internalValidationError([{ path: '', message: 'unsupported Content-Type for this operation' }], 'unsupported request body type');
  }
  return undefined;
}

/** The answer to anything thrown under /internal; an unknown failure is logged and never echoed. */
export function handleInternalError(error: unknown, c: Context, logger: Logger): Response {
  const known = toInternalError(error);
  if (known) return c.json(known.toBody(), known.status);
  logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error in internal API');
  return c.json({ code: 'INTERNAL_ERROR', message: 'internal error' } satisfies InternalErrorBody, 500);
}
