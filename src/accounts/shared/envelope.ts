// The account API's response envelope `{code, message, data}`: a success, or a failure answered
// with its code, status and headers.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiCode } from './error-table.js';

export { ApiCode } from './error-table.js';

export interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

/** A failure with its envelope code and HTTP status, as answered. */
export class ApiError extends Error {
  constructor(
    readonly code: ApiCode,
    message: string,
    readonly status: ContentfulStatusCode,
    readonly headers: Record<string, string> = {},
    /** `data` of the answer; null unless the failure's row declares some. */
    readonly data: Record<string, unknown> | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A success; `data` typed by the route's output schema. */
export function ok<T>(c: Context, data: T) {
  return c.json({ code: ApiCode.OK, message: 'ok' as const, data }, 200);
}

export function envelopeError(c: Context, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json({ code: error.code, message: error.message, data: error.data } satisfies Envelope<Record<string, unknown> | null>, error.status);
}
