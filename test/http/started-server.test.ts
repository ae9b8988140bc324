// The request path as production runs it: the app served by @hono/node-server on 127.0.0.1, over a
// real socket with raw header lines. Hono's request id, secure headers and body limits, the relay's
// token guard and JSON check, and hono-rate-limiter's headers, in both areas.
import { serve, type ServerType } from '@hono/node-server';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

const API_LIMIT = 64 * 1024;
const RELAY_LIMIT = 256 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let server: ServerType;
let port: number;
beforeAll(async () => {
  // Logins limited to 2 a minute per client; without a trusted proxy the key is the socket's address.
  t = await buildTestApp({ RATE_LIMIT_AUTH_PER_MIN: '2' });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Parsed when the answer is JSON, else its text. */
  body: any;
}

/**
 * One request with its header lines exactly as given (repeated names stay repeated; Host added), its
 * body written in `chunks`. A server that answers before the whole body is sent may close the
 * connection while the rest is written: the answer it gave is what counts.
 */
function send(method: string, path: string, rawHeaders: [string, string][], chunks: string[] = []): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: [['Host', `127.0.0.1:${port}`], ...rawHeaders].flat() as unknown as http.OutgoingHttpHeaders, agent: false }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      const isJson = /json/.test(res.headers['content-type'] ?? '');
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: isJson && text ? JSON.parse(text) : text });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

const token = (): [string, string] => ['X-Internal-Token', t.internalToken];
const json: [string, string] = ['Content-Type', 'application/json'];
const chunked: [string, string] = ['Transfer-Encoding', 'chunked'];
/** A JSON object of exactly `bytes` bytes. */
const bodyOf = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`;
/** `text` in pieces of 16 KiB, each written as its own chunk. */
const pieces = (text: string) => Array.from({ length: Math.ceil(text.length / 16_384) }, (_, i) => text.slice(i * 16_384, (i + 1) * 16_384));

describe('request id (hono/request-id)', () => {
  it('echoes a sane X-Request-Id, up to 255 of letters, digits, _, - and =', async () => {
    for (const id of ['abc-123', 'a_b=c', 'x'.repeat(255)]) {
      expect((await send('GET', '/healthz', [['X-Request-Id', id]])).headers['x-request-id']).toBe(id);
    }
    // In both areas, errors included.
    expect((await send('GET', '/api/v1/auth/nowhere', [['X-Request-Id', 'api-404']])).headers['x-request-id']).toBe('api-404');
    expect((await send('GET', '/internal/info', [['X-Request-Id', 'relay-401']])).headers['x-request-id']).toBe('relay-401');
  });

  it('replaces a missing, unsafe, too long or repeated one with a fresh UUID', async () => {
    const refused: [string, string][][] = [[], [['X-Request-Id', 'a b']], [['X-Request-Id', 'a/b']], [['X-Request-Id', 'x'.repeat(256)]], [['X-Request-Id', 'one'], ['X-Request-Id', 'two']]];
    const ids = new Set<string>();
    for (const headers of refused) {
      const id = (await send('GET', '/healthz', headers)).headers['x-request-id'];
      expect(id).toMatch(UUID);
      ids.add(id as string);
    }
    expect(ids.size).toBe(refused.length);
  });
});

describe('secure headers (hono/secure-headers)', () => {
  it('are on every /api answer and the docs page, errors included, with no X-Powered-By; not on /internal', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/auth/profile'],
      ['GET', '/api/v1/auth/nowhere'],
      ['GET', '/docs'],
    ] as const) {
      const res = await send(method, path, []);
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.headers['x-frame-options'], path).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security'], path).toMatch(/^max-age=\d+; includeSubDomains$/);
      expect(res.headers['referrer-policy'], path).toBe('no-referrer');
      expect(res.headers['x-powered-by'], path).toBeUndefined();
    }
    const relay = await send('GET', '/internal/info', [token()]);
    expect(relay.status).toBe(200);
    expect(relay.headers['x-content-type-options']).toBeUndefined();
  });
});

describe('body limits (hono/body-limit)', () => {
  it('/api: 64 KiB passes; more is 413 with code 1001 in the envelope, by its Content-Length or as it streams', async () => {
    const atLimit = bodyOf(API_LIMIT);
    // Past the limit check: refused by the route's own checks (no token).
    const within = await send('PUT', '/api/v1/auth/profile', [json, ['Content-Length', String(atLimit.length)]], [atLimit]);
    expect(within.status).toBe(401);
    const over = bodyOf(API_LIMIT + 1);
    const declared = await send('PUT', '/api/v1/auth/profile', [json, ['Content-Length', String(over.length)]], [over]);
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ code: 1001, message: 'request body exceeds 64 KiB', data: null });
    expect(declared.headers['x-content-type-options']).toBe('nosniff');
    const streamed = await send('POST', '/api/v1/auth/login', [json, chunked], pieces(bodyOf(API_LIMIT + 100)));
    expect(streamed.status).toBe(413);
    expect(streamed.body).toEqual({ code: 1001, message: 'request body exceeds 64 KiB', data: null });
  });

  it('/internal: 256 KiB passes; more is 413 VALIDATION_ERROR, by its Content-Length or as it streams; a small chunked body passes', async () => {
    const atLimit = bodyOf(RELAY_LIMIT);
    const within = await send('POST', '/internal/v1/routers', [token(), json, ['Content-Length', String(atLimit.length)]], [atLimit]);
    expect(within.status).toBe(201);
    expect((await send('DELETE', `/internal/v1/routers/${within.body.id}`, [token()])).status).toBe(204);
    const over = bodyOf(RELAY_LIMIT + 1);
    const declared = await send('POST', '/internal/v1/routers', [token(), json, ['Content-Length', String(over.length)]], [over]);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ code: 'VALIDATION_ERROR', message: 'request body exceeds 256 KiB' });
    const streamed = await send('POST', '/internal/v1/routers', [token(), json, chunked], pieces(bodyOf(RELAY_LIMIT + 100)));
    expect(streamed.status).toBe(413);
    expect(streamed.body).toMatchObject({ code: 'VALIDATION_ERROR', message: 'request body exceeds 256 KiB' });
    const small = await send('POST', '/internal/v1/routers', [token(), json, chunked], ['{"appData":', '{"room":"r1"}}']);
    expect(small.status).toBe(201);
  });

  it('/internal: the token is checked before the body limit (401, not 413)', async () => {
    const over = bodyOf(RELAY_LIMIT + 1);
    const res = await send('POST', '/internal/v1/routers', [json, ['Content-Length', String(over.length)]], [over]);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });
});

describe('the relay’s token guard and JSON check', () => {
  it('takes the token in any letter case and refuses it missing, wrong or sent twice', async () => {
    expect((await send('POST', '/internal/v1/routers', [['x-INTERNAL-token', t.internalToken]])).status).toBe(201);
    for (const headers of [[], [['X-Internal-Token', `${t.internalToken}x`]], [token(), token()]] as [string, string][][]) {
      const res = await send('POST', '/internal/v1/routers', headers);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('reads the Content-Type with parameters, refuses a body of another type, and takes no body at all', async () => {
    const body = JSON.stringify({ appData: { room: 'r2' } });
    expect((await send('POST', '/internal/v1/routers', [token(), ['Content-Type', 'application/json; charset=utf-8']], [body])).status).toBe(201);
    const plain = await send('POST', '/internal/v1/routers', [token(), ['Content-Type', 'text/plain']], [body]);
    expect(plain.status).toBe(400);
    expect(plain.body.code).toBe('VALIDATION_ERROR');
    expect((await send('POST', '/internal/v1/routers', [token()])).status).toBe(201);
  });
});

describe('rate-limit headers (hono-rate-limiter, draft-7)', () => {
  it('counts by the socket address: RateLimit-Policy and RateLimit on each answer, then 429 with 1003 and Retry-After', async () => {
    const login = () => send('POST', '/api/v1/auth/login', [json, ['X-Forwarded-For', '192.0.2.1']], [JSON.stringify({ account: 'nobody_here', password: 'whatever1' })]);
    const first = await login();
    expect(first.status).toBe(401);
    expect(first.headers['ratelimit-policy']).toBe('2;w=60');
    expect(first.headers['ratelimit']).toMatch(/^limit=2, remaining=1, reset=(59|60)$/);
    const second = await login();
    expect(second.status).toBe(401);
    expect(second.headers['ratelimit']).toMatch(/^limit=2, remaining=0, reset=\d+$/);
    const third = await login();
    expect(third.status).toBe(429);
    expect(third.body).toEqual({ code: 1003, message: 'too many requests, retry later', data: null });
    expect(third.headers['ratelimit-policy']).toBe('2;w=60');
    expect(third.headers['ratelimit']).toMatch(/^limit=2, remaining=0, reset=\d+$/);
    const retryAfter = Number(third.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 0 && retryAfter <= 60).toBe(true);
    expect(third.headers['x-content-type-options']).toBe('nosniff');
  });
});
