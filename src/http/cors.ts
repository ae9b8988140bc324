// CORS for the account API: browsers on the configured origins may call /api/* (CORS_ORIGINS).
import { cors } from 'hono/cors';

export interface ApiCorsOptions {
  /** Origins as browsers send them, or `['*']`. */
  origins: readonly string[];
  /** Access-Control-Max-Age of a preflight's answer, seconds. */
  maxAgeS: number;
}

/** What a web client may read besides the CORS-safelisted headers: its rate-limit budget and the request id. */
export const CORS_EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id'] as const;

/** What the account API takes: JSON bodies, a bearer token, and the client's own request id. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'] as const;

/**
 * Hono's cors middleware with the account API's methods and headers. An origin that is not listed
 * gets no Access-Control-Allow-Origin, so the browser refuses to hand the answer to the page. No
 * credentials: the API authenticates with a bearer token, never with cookies.
 * @example app.use('/api/*', apiCors({ origins: ['https://app.example.com'], maxAgeS: 7200 }))
 */
export function apiCors(options: ApiCorsOptions) {
  return cors({
    origin: options.origins.includes('*') ? '*' : [...options.origins],
    allowMethods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowHeaders: [...CORS_ALLOWED_HEADERS],
    exposeHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: options.maxAgeS,
  });
}
