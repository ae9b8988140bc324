// One log line per answered request: its id, method, path, status and duration.
import { createMiddleware } from 'hono/factory';
import type { RequestIdVariables } from 'hono/request-id';
import type { Logger } from '../logger.js';

/**
 * Logs each request once it is answered, at info, with the id `hono/request-id` gave it (so it runs
 * after that middleware). Never the headers or the body: they may hold credentials.
 * @example app.use(requestId(), requestLog(logger))
 */
export function requestLog(logger: Logger) {
  return createMiddleware<{ Variables: RequestIdVariables }>(async function requestLog(c, next) {
    const started = performance.now();
    await next();
    // At LOG_LEVEL=warn and above the line would be dropped anyway: skip building it.
    if (!logger.isLevelEnabled('info')) return;
    logger.info(
      {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      },
      'request',
    );
  });
}
