// hono/secure-headers with its default options, cheaper where Node serves the request.
import type { MiddlewareHandler } from 'hono';
import { secureHeaders as honoSecureHeaders } from 'hono/secure-headers';
import { nodeResponse } from './node-response.js';

/** The headers Hono's middleware sets with its defaults, read from the middleware itself once. */
async function defaultSecureHeaders(): Promise<[string, string][]> {
  const headers = new Headers();
  const probe = { res: { headers } } as unknown as Parameters<MiddlewareHandler>[0];
  await honoSecureHeaders()(probe, async () => {});
  return [...headers];
}

const DEFAULTS = await defaultSecureHeaders();

/**
 * `secureHeaders()` of hono with its defaults: the same headers on every answer, no X-Powered-By.
 * Served by @hono/node-server, they go onto Node's response (see `nodeResponse`) instead of into a web
 * `Headers` object per answer; elsewhere Hono's own middleware runs. One difference, which no route
 * here meets: a handler that sets one of these headers itself keeps its value, where Hono's
 * middleware would overwrite it.
 * @example app.use('/api/*', secureHeaders())
 */
export function secureHeaders(): MiddlewareHandler {
  const hono = honoSecureHeaders();
  return async function secureHeaders(c, next) {
    const outgoing = nodeResponse(c);
    if (!outgoing) return hono(c, next);
    for (const [name, value] of DEFAULTS) outgoing.setHeader(name, value);
    await next();
  };
}
