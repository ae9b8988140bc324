// How the relay's errors become HTTP answers: called by the app's onError for every path under /internal.
// (Not a sub-app onError: Hono then wraps each of the sub-app's handlers in an error-handling
// compose on every request, a tenth of the relay's CPU per call.)
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../../logger.js';
import { RelayError, validationError, type RelayErrorBody } from '../errors.js';

// validator.ts (beside this file) takes these from './errors.js'.
export { validationError, type ValidationIssue } from '../errors.js';

/** A RelayError, or what a Hono middleware threw (body limit, malformed JSON, token guard) as one. */
export function toRelayError(error: unknown): RelayError | undefined {
  if (error instanceof RelayError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 413) return new RelayError('VALIDATION_ERROR', 'request body too large', { issues: [{ path: '', message: 'body too large' }] });
    if (error.status === 400) return validationError([{ path: '', message: 'malformed JSON' }], 'request body is not valid JSON');
    if (error.status === 401) return new RelayError('UNAUTHORIZED', 'missing or invalid internal token');
  }
  return undefined;
}

/** The answer to anything thrown under /internal; an unknown failure is logged and never echoed. */
export function handleRelayError(error: unknown, c: Context, logger: Logger) {
  const known = toRelayError(error);
  if (known) return c.json(known.toBody(), known.status);
  logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error in media relay API');
  return c.json({ code: 'INTERNAL_ERROR', message: 'internal error' } satisfies RelayErrorBody, 500);
}
