// The account API's response envelope `{code, message, data}` and its error codes.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export const ApiCode = {
  OK: 0,
  INTERNAL: 1000,
  INVALID_REQUEST: 1001,
  UNAUTHENTICATED: 1002,
  RATE_LIMITED: 1003,
  NOT_FOUND: 1004,
  /** Too much password hashing queued: answered at once with Retry-After instead of a long wait. */
  SERVER_BUSY: 1005,
  USERNAME_TAKEN: 2001,
  EMAIL_TAKEN: 2002,
  WRONG_PASSWORD: 2003,
  NO_SUCH_ACCOUNT: 2004,
  INVALID_RESET_CODE: 2005,
} as const;
export type ApiCode = (typeof ApiCode)[keyof typeof ApiCode];

export interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

/** A failure with its envelope code and HTTP status; turned into a response by the app's onError. */
export class ApiError extends Error {
  constructor(
    readonly code: ApiCode,
    message: string,
    readonly status: ContentfulStatusCode,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function ok<T>(c: Context, data: T) {
  return c.json({ code: ApiCode.OK, message: 'ok', data } satisfies Envelope<T>, 200);
}

export function envelopeError(c: Context, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json({ code: error.code, message: error.message, data: null } satisfies Envelope<null>, error.status);
}
