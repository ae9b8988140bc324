// GET /internal/v1/auth-events: the audit trail for operators, behind the internal token, in the
// relay area's error shape ({code, message, details}). Newest first, paginated by an opaque cursor.
import { Hono } from 'hono';
import type { AppEnv } from '../http/env.js';
import { internalValidationError as validationError } from '../http/internal-errors.js';
import { decodeCursor, encodeCursor, type AuditLog } from './audit.js';
import { AUTH_EVENTS_DEFAULT_LIMIT, authEventsQuery } from './contract/audit.js';
import { authEventView } from './views.js';

export { AUTH_EVENTS_MAX_LIMIT, authEventsQuery } from './contract/audit.js';

/**
 * Mounted under /internal, behind the app's internal token guard.
 * @example app.route('/internal', createAuthEventsApp(audit))
 */
export function createAuthEventsApp(audit: AuditLog) {
  return new Hono<AppEnv>().get('/v1/auth-events', async (c) => {
    // Each parameter once: a repeated one is refused rather than silently picking one.
    const raw: Record<string, string> = {};
    for (const [name, values] of Object.entries(c.req.queries())) {
      if (values.length > 1) throw validationError([{ path: name, message: 'may be given once' }], 'invalid query');
      raw[name] = values[0]!;
    }
    const parsed = authEventsQuery.safeParse(raw);
    if (!parsed.success) {
      throw validationError(
        parsed.error.issues.map((i) => ({ path: i.code === 'unrecognized_keys' ? String(i.keys[0]) : i.path.map(String).join('.'), message: i.code === 'unrecognized_keys' ? 'not a parameter of this endpoint' : i.message })),
        'invalid query',
      );
    }
    const query = parsed.data;
    let beforeId: number | undefined;
    if (query.cursor !== undefined) {
      beforeId = decodeCursor(query.cursor);
      if (beforeId === undefined) throw validationError([{ path: 'cursor', message: 'the next_cursor of a previous page' }], 'invalid query');
    }
    const limit = query.limit ?? AUTH_EVENTS_DEFAULT_LIMIT;
    // One more than asked tells whether another page follows.
    const rows = await audit.list({ userId: query.userId, type: query.type, since: query.since, beforeId, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return c.json({ events: page.map(authEventView), next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.id) : null });
  });
}
