// The request id: the client's X-Request-Id when it is a sane token, else a fresh UUID; kept in the
// context (`c.get('requestId')`) and echoed in the response's X-Request-Id.
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import type { RequestIdVariables } from 'hono/request-id';
import { requestHeader } from './node-request.js';
import { setResponseHeader } from './node-response.js';

const HEADER = 'X-Request-Id';
const HEADER_NAME = HEADER.toLowerCase();
const MAX_LENGTH = 255;
const UNSAFE = /[^\w\-=]/;

/**
 * Gives `c` its request id: the client's X-Request-Id when sane, else a fresh UUID; echoed in the
 * response's X-Request-Id, on Node's response when there is one (see `nodeResponse`), else with
 * `c.header()`. The client sees the same header either way.
 */
export function assignRequestId(c: Context<{ Variables: RequestIdVariables }>): string {
  let id = requestHeader(c, HEADER_NAME);
  if (!id || id.length > MAX_LENGTH || UNSAFE.test(id)) id = randomUUID();
  c.set('requestId', id);
  setResponseHeader(c, HEADER, id);
  return id;
}

