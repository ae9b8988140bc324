// GET /internal/v1/auth-events (mounted under /internal, behind the app's internal token guard), in
// the internal face's error shape.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ZodError } from 'zod';
import type { AppEnv } from '../../http/env.js';
import { internalValidationError as validationError } from '../../http/internal-errors.js';
import { decodeCursor, encodeCursor, type AuditLog } from './log.js';
import { AUTH_EVENTS_DEFAULT_LIMIT, listAuthEvents } from './contract.js';
import { authEventView } from './views.js';

/** Each query parameter once (a repeated one is refused rather than silently picking one), then its rule. */
function queryHook(result: { success: boolean; error?: ZodError }, c: Context): void {
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length > 1) throw validationError([{ path: name, message: 'may be given once' }], 'invalid query');
  }
  if (!result.success && result.error) {
    throw validationError(
      result.error.issues.map((i) => ({
        path: i.code === 'unrecognized_keys' ? String(i.keys[0]) : i.path.map(String).join('.'),
        message: i.code === 'unrecognized_keys' ? 'not a parameter of this endpoint' : i.message,
      })),
      'invalid query',
    );
  }
}

/** @example app.route('/internal', auditRoutes(audit)) */
export function auditRoutes(audit: AuditLog) {
  return new OpenAPIHono<AppEnv>({ defaultHook: queryHook }).openapi(listAuthEvents, async (c) => {
    const query = c.req.valid('query');
    let beforeId: number | undefined;
    if (query.cursor !== undefined) {
      beforeId = decodeCursor(query.cursor);
      if (beforeId === undefined) throw validationError([{ path: 'cursor', message: 'the next_cursor of a previous page' }], 'invalid query');
    }
    const limit = query.limit ?? AUTH_EVENTS_DEFAULT_LIMIT;
    // One more than asked tells whether another page follows.
    const rows = await audit.list({ userId: query.userId, type: query.type, since: query.since, beforeId, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return c.json({ events: page.map(authEventView), next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.id) : null }, 200);
  });
}
