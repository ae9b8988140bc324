// Per-client rate limits for /api: hono-rate-limiter's middleware keyed by the client's address; over the limit: 429 with code 1003.
import { isIPv4, isIPv6 } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { MemoryStore, rateLimiter, type Store } from 'hono-rate-limiter';
import type { Config } from '../config/index.js';
import { ipv6Groups } from './ip-address.js';

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

/**
 * The rate-limit key of a client address: an IPv4 address as it is (an IPv4-mapped IPv6 address,
 * `::ffff:192.0.2.1`, is that IPv4 address), an IPv6 address by its /64, since one subscriber
 * usually holds a whole /64 and can rotate freely inside it. Anything else is kept as it is.
 * @example addressKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 */
export function addressKey(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const noZone = bare.split('%')[0]!;
  if (isIPv4(noZone)) return noZone;
  if (!isIPv6(noZone)) return address;
  const groups = ipv6Groups(noZone);
  // ::ffff:0:0/96 holds IPv4 addresses (RFC 4291 2.5.5.2), as a dual-stack socket reports them.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
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
 * hono-rate-limiter's `rateLimiter`, keyed by the client's address (IPv6 by its /64), or by `keyOf`
 * when given (e.g. the signed-in account, for a limiter placed after the session check), counting in
 * `store` (from RateLimitStores: memory, or Redis with the memory fallback), or in a MemoryStore of its
 * own (so every app and test has its own counters). A limit of 0 disables it. Headers as the library's
 * `standardHeaders: 'draft-7'` sets them (`RateLimit-Policy`, `RateLimit`, and `Retry-After` on the
 * 429); the 429 itself answered by `tooMany` (the area's own shape), or a plain 429 JSON body.
 * @example app.post('/login', rateLimit({ perMinute: 10, trustProxy: 'none', tooMany: (c) => c.json({…}, 429) }), handler)
 */
export function rateLimit(options: {
  perMinute: number;
  trustProxy: TrustProxy;
  windowMs?: number;
  store?: Store;
  tooMany?: (c: Context) => Response;
  keyOf?: (c: Context) => string;
}): MiddlewareHandler {
  const { perMinute, trustProxy, windowMs = 60_000, store = new MemoryStore(), tooMany = (c: Context) => c.json({ error: 'too many requests' }, 429), keyOf } = options;
  if (!Number.isInteger(perMinute) || perMinute < 0) throw new RangeError(`rate limit must be a non-negative integer, got ${perMinute}`);
  if (perMinute === 0) {
    return async function rateLimitDisabled(_c, next) {
      await next();
    };
  }
  return rateLimiter({
    windowMs,
    limit: perMinute,
    standardHeaders: 'draft-7',
    keyGenerator: (c) => {
      if (keyOf) return keyOf(c);
      const address = clientAddress(c, trustProxy);
      return address === undefined ? UNKNOWN_CLIENT : addressKey(address);
    },
    store,
    handler: (c) => tooMany(c),
  });
}
