// How the relay's errors become HTTP answers: called by the app's onError for every path under /internal.
// (Not a sub-app onError: Hono then wraps each of the sub-app's handlers in an error-handling
// compose on every request, a tenth of the relay's CPU per call.)
import type { Context } from 'hono';
import { handleInternalError } from '../../http/internal-errors.js';
import type { Logger } from '../../logger.js';

/** The answer to anything thrown under /internal (the shared internal shape). */
export function handleRelayError(error: unknown, c: Context, logger: Logger) {
  return handleInternalError(error, c, logger);
}
