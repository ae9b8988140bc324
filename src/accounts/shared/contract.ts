// The envelope every /api answer comes in, and how a route of the account API is declared: its
// success inside the envelope, its error responses from the one error table.
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import { z } from 'zod';
import { errorResponses, type ErrorRow } from './error-table.js';

/** A success: code 0, message "ok", and the data. */
export function okEnvelope<T extends z.ZodType>(data: T) {
  return z.strictObject({ code: z.literal(0), message: z.literal('ok'), data });
}

export type Envelope<T> = { code: 0; message: 'ok'; data: T };

/** Every time in an answer. */
export const timeString = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');

/** The operation needs `Authorization: Bearer <access token>` (the module's document names the scheme). */
export const BEARER = [{ bearer: [] as string[] }];

/**
 * createRoute, with the route's error responses added from the error table: the handler's types
 * know the success it returns; the failures it throws are answered by the /api error handler.
 * @example
 * export const login = accountRoute({ method: 'post', path: '/login', ..., responses: { 200: ok(session) } }, ['invalid_request', 'wrong_password'])
 */
export function accountRoute<P extends string, R extends Omit<RouteConfig, 'path'> & { path: P }>(route: R, errors: readonly ErrorRow[]) {
  // Every request's body is limited before any route sees it (src/app.ts, API_BODY_LIMIT): 413 1001.
  const rows: ErrorRow[] = errors.includes('body_too_large') ? [...errors] : [...errors, 'body_too_large'];
  return createRoute({ ...route, responses: { ...route.responses, ...errorResponses(rows) } });
}

/** A success response of a route: `data` in the envelope, as JSON. */
export function okResponse<T extends z.ZodType>(description: string, data: T) {
  return { description, content: { 'application/json': { schema: okEnvelope(data) } } };
}
