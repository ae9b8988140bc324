// GET /internal/v1/auth-events: the audit trail for operators, behind the internal token, in the
// relay area's error shape ({code, message, details}). Newest first, paginated by an opaque cursor.
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../http/env.js';
import { internalValidationError as validationError } from '../http/internal-errors.js';
import { formatTime } from '../time.js';
import { AUTH_EVENT_TYPES, decodeCursor, encodeCursor, type AuditLog, type AuthEvent } from './audit.js';

export const AUTH_EVENTS_MAX_LIMIT = 200;
export const AUTH_EVENTS_DEFAULT_LIMIT = 50;

/** `yyyy-MM-dd HH:mm:ss` (Asia/Shanghai, as every time in responses) or an ISO 8601 time with its offset. */
const SHANGHAI_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The instants `since` may name: the Unix epoch to the last millisecond of year 9999 (UTC). Outside
 * it, years 0000 and 10000+ serialise to strings PostgreSQL and PGlite refuse (a 500 before this
 * bound), and nothing in the trail predates 1970.
 */
const SINCE_MIN_MS = 0;
const SINCE_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const SINCE_FORMAT = 'yyyy-MM-dd HH:mm:ss (Asia/Shanghai) or an ISO 8601 time with offset';
const SINCE_RANGE = 'a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z';

function parseSince(value: string): Date | 'format' | 'range' {
  const local = SHANGHAI_TIME.exec(value);
  const text = local ? `${local[1]}-${local[2]}-${local[3]}T${local[4]}:${local[5]}:${local[6]}+08:00` : ISO_TIME.test(value) ? value : undefined;
  if (!text) return 'format';
  const ms = new Date(text).getTime();
  if (Number.isNaN(ms)) return 'format';
  return ms < SINCE_MIN_MS || ms > SINCE_MAX_MS ? 'range' : new Date(ms);
}

export const authEventsQuery = z.strictObject({
  userId: z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/, 'a positive integer')
    .transform(Number)
    .refine((n) => n <= 2_147_483_647, 'a positive integer')
    .optional(),
  type: z.enum(AUTH_EVENT_TYPES, { error: `one of ${AUTH_EVENT_TYPES.join(', ')}` }).optional(),
  since: z
    .string()
    .max(40, SINCE_FORMAT)
    .transform((v, ctx) => {
      const date = parseSince(v);
      if (date === 'format' || date === 'range') {
        ctx.addIssue({ code: 'custom', message: date === 'format' ? SINCE_FORMAT : SINCE_RANGE });
        return z.NEVER;
      }
      return date;
    })
    .optional(),
  limit: z
    .string()
    .regex(/^[0-9]{1,3}$/, `1-${AUTH_EVENTS_MAX_LIMIT}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= AUTH_EVENTS_MAX_LIMIT, `1-${AUTH_EVENTS_MAX_LIMIT}`)
    .optional(),
  cursor: z.string().max(40, 'the next_cursor of a previous page').optional(),
});

export function authEventView(e: AuthEvent) {
  return {
    id: e.id,
    type: e.type,
    time: formatTime(e.occurredAt),
    user_id: e.userId,
    session_id: e.sessionId,
    account: e.account,
    detail: e.detail,
    ip: e.ip,
    user_agent: e.userAgent,
  };
}

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
