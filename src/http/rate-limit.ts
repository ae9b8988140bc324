// Per-client rate limits for /api (hono-rate-limiter); over the limit: 429 with code 1003.
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import type { Config } from '../config.js';
import { ApiCode, ApiError, envelopeError } from './envelope.js';

export type TrustProxy = Config['rateLimit']['trustProxy'];

/** The key used when nothing identifies the client (e.g. `app.request()` in tests has no socket). */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * The client's address as far as it can be trusted: the socket's peer, or with `fly` the
 * `Fly-Client-IP` header set by Fly's edge, or with `xff` the right-most `X-Forwarded-For` entry
 * (the one our own proxy appended; everything left of it is client-controlled). Never throws.
 */
export function clientAddress(c: Context, trustProxy: TrustProxy): string | undefined {
  if (trustProxy === 'fly') {
    const fly = c.req.header('fly-client-ip')?.trim();
    if (fly) return fly;
  } else if (trustProxy === 'xff') {
    const last = c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim();
    if (last) return last;
  }
  return socketAddress(c);
}

function socketAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address || undefined;
  } catch {
    // No Node socket behind this request (app.request(), another runtime).
    return undefined;
  }
}

/**
 * A limiter with its own in-memory store (one per call, so every app and test has its own
 * counters). A limit of 0 disables it.
 * @example app.post('/login', rateLimit({ perMinute: 10, trustProxy: 'none' }), handler)
 */
export function rateLimit(options: { perMinute: number; trustProxy: TrustProxy; windowMs?: number }): MiddlewareHandler {
  const { perMinute, trustProxy, windowMs = 60_000 } = options;
  if (!Number.isInteger(perMinute) || perMinute < 0) throw new RangeError(`rate limit must be a non-negative integer, got ${perMinute}`);
  if (perMinute === 0) {
    return async function rateLimitDisabled(_c, next) {
      await next();
    };
  }
  return rateLimiter({
    windowMs,
    limit: perMinute,
    // draft-7: `RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`; plus `Retry-After` on 429.
    standardHeaders: 'draft-7',
    keyGenerator: (c) => clientAddress(c, trustProxy) ?? UNKNOWN_CLIENT,
    handler: (c) => envelopeError(c, new ApiError(ApiCode.RATE_LIMITED, 'too many requests, retry later', 429)),
  });
}
