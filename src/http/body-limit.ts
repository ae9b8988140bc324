// Request body size limit: decided from the request's headers when they size the body, Hono's own
// streaming bodyLimit for the bodies they do not (chunked).
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit';

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export interface BodyLimitOptions {
  maxSize: number;
  onError: (c: Context) => Response | Promise<Response>;
}

/**
 * Hono's `bodyLimit`, asked only about the bodies whose size the headers do not give. Hono's
 * middleware reads `c.req.raw.body` on every request, and on @hono/node-server that builds the full
 * web Request (undici's Request, a ReadableStream over the socket, an AbortSignal) for every call,
 * GETs included, which the body parser then reads through instead of its direct path: measured at
 * about a fifth of the relay's CPU per call (bench/RESULTS.md, "Plain libraries"). A body with a
 * Content-Length (and no Transfer-Encoding) is decided from that header, a bodyless method with no
 * Content-Length passes; only chunked bodies go through Hono's streaming check. Public API only
 * (`c.req.header`, `c.req.method`).
 * @example app.use('/api/*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.json({…}, 413) }))
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  if (!(options.maxSize >= 0)) throw new Error('bodyLimit: maxSize must be a non-negative number');
  const streaming = streamingBodyLimit(options);
  return async function bodyLimit(c, next) {
    const transferEncoding = c.req.header('transfer-encoding');
    const contentLength = c.req.header('content-length');
    if (transferEncoding === undefined) {
      // Over HTTP/1.1 a body comes with one of the two headers; a Request built in-process
      // (app.request, fetch handlers) may have neither, so methods that carry bodies still check.
      if (contentLength === undefined && BODYLESS.has(c.req.method)) return next();
      const length = contentLength === undefined ? NaN : Number(contentLength);
      if (Number.isSafeInteger(length) && length >= 0) return length > options.maxSize ? options.onError(c) : next();
    }
    return streaming(c, next);
  };
}
