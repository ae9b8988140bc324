// Response headers written straight onto Node's response when @hono/node-server serves the request.
import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';

/**
 * The Node response behind `c` while its headers can still be set, else undefined (`app.request` in
 * tests, another runtime). A header set there with `setHeader` is merged by @hono/node-server's
 * `writeHead` into whatever the handler answers, and the handler's own header of that name wins.
 * Setting it there instead of with `c.header()` or `c.res.headers` keeps the answer's lightweight
 * form: a web `Headers` object per response (undici's checks, then @hono/node-server copying it back
 * out) costs more CPU than the rest of a small JSON answer.
 */
export function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing !== undefined && typeof outgoing.setHeader === 'function' && !outgoing.headersSent ? outgoing : undefined;
}

/** Sets a response header on Node's response when there is one (see `nodeResponse`), else with `c.header()`. */
export function setResponseHeader(c: Context, name: string, value: string): void {
  const outgoing = nodeResponse(c);
  if (outgoing) outgoing.setHeader(name, value);
  else c.header(name, value);
}
