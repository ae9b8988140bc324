// The audit trail for operators: GET /internal/v1/auth-events, behind the internal token, in the
// internal face's error shape ({code, message, details}). Newest first, paginated by an opaque cursor.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { AUTH_EVENT_TYPES } from './log.js';
import { timeString } from '../shared/contract.js';

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

export const authEvent = z.strictObject({
  id: z.int(),
  type: z.enum(AUTH_EVENT_TYPES),
  time: timeString,
  user_id: z.int().nullable(),
  session_id: z.string().nullable(),
  account: z.string().nullable().describe('login failures: the account as typed, trimmed and lower-cased'),
  detail: z.string().nullable().describe('failure reason, or who ended a session'),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
});

export const authEventsPage = z.strictObject({ events: z.array(authEvent), next_cursor: z.string().nullable() });

export type AuthEventView = z.output<typeof authEvent>;

/** The internal face's error body (src/http/internal-errors.ts answers it). */
const internalError = z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

const VALIDATION_MEANING = 'a query parameter fails its rule, is unknown or repeated; details.issues';

export const listAuthEvents = createRoute({
  tags: ['audit'],
  method: 'get',
  path: '/v1/auth-events',
  summary: `Audit trail of authentication events, newest first (at most ${AUTH_EVENTS_MAX_LIMIT} a page; follow next_cursor)`,
  request: { query: authEventsQuery },
  responses: {
    200: { description: 'a page of events', content: { 'application/json': { schema: authEventsPage } } },
    400: {
      description: `VALIDATION_ERROR: ${VALIDATION_MEANING}`,
      content: { 'application/json': { schema: internalError, examples: { VALIDATION_ERROR: { value: { code: 'VALIDATION_ERROR', message: VALIDATION_MEANING } } } } },
    },
  },
});
