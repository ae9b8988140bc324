// Body size limit that decides from the headers whenever it can.
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit';
import { requestHeader } from './node-request.js';

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export interface BodyLimitOptions {
  maxSize: number;
  onError: (c: Context) => Response | Promise<Response>;
}

/**
 * Hono's bodyLimit, minus its cost on ordinary requests: it touches `c.req.raw.body`, which makes
 * @hono/node-server build a full web Request and stream for every request (GETs included), about
 * half the CPU of a relay call. A request that declares a Content-Length (and no
 * Transfer-Encoding) or carries no body at all is decided from its headers here; only chunked
 * bodies go through Hono's streaming check.
 * @example app.use('/api/*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.json({…}, 413) }))
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const limit = bodyLimitCheck(options);
  return async function bodyLimit(c, next) {
    const verdict = limit.decide(c);
    if (verdict === 'within') return next();
    if (verdict === 'over') return options.onError(c);
    return limit.streaming(c, next);
  };
}

/** What the headers say of a body: within the limit, over it, or unknown until it is read. */
export type BodySizeVerdict = 'within' | 'over' | 'stream';

/**
 * The limit's decision from the headers alone, synchronous, for a middleware that does more than
 * limit (the relay's gate), with Hono's streaming check for the bodies the headers do not size.
 * @example const limit = bodyLimitCheck(o); if (limit.decide(c) === 'stream') return limit.streaming(c, next)
 */
export function bodyLimitCheck(options: BodyLimitOptions): { decide(c: Context): BodySizeVerdict; streaming: MiddlewareHandler } {
  if (!(options.maxSize >= 0)) throw new Error('bodyLimit: maxSize must be a non-negative number');
  return {
    streaming: streamingBodyLimit(options),
    decide(c) {
      const transferEncoding = requestHeader(c, 'transfer-encoding');
      const contentLength = requestHeader(c, 'content-length');
      if (transferEncoding === undefined) {
        // Over HTTP/1.1 a body comes with one of the two headers; a Request built in-process
        // (app.request, fetch handlers) may have neither, so methods that carry bodies still check.
        if (contentLength === undefined) return BODYLESS.has(c.req.method) ? 'within' : 'stream';
        const length = Number(contentLength);
        if (Number.isSafeInteger(length) && length >= 0) return length > options.maxSize ? 'over' : 'within';
      }
      return 'stream';
    },
  };
}
