// Request headers read straight from Node's request when @hono/node-server serves it.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/**
 * A request header by its lower-case name: from Node's parsed `headers` object when @hono/node-server
 * serves the request, else (`app.request` in tests, another runtime) from `c.req.header()`.
 *
 * `c.req.header()` on @hono/node-server checks the name against a pattern, lower-cases it, looks it up
 * in that same object, trims the value and checks it for NUL/CR/LF on every call, all of which Node's
 * parser has already done or refused; the relay reads five headers a call (token, request id, body
 * size, content type), about a microsecond and a half in all. Repeated headers are joined with ", "
 * by Node as by Hono (`set-cookie` is never read here).
 * @example const token = requestHeader(c, 'x-internal-token')
 */
export function requestHeader(c: Context, lowerName: string): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const headers = incoming?.headers;
  if (headers === undefined || typeof headers !== 'object') return c.req.header(lowerName);
  const value = headers[lowerName];
  return typeof value === 'string' ? value : undefined;
}
