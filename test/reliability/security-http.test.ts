// HTTP security checks of the app (no mocks: these run in the bulk): rate-limit keys that a spoofed
// X-Forwarded-For cannot change in any TRUST_PROXY mode, secure headers on every /api answer, no CORS
// on /internal, and both body limits (also for chunked bodies over a real socket). The internal
// token's constant-time comparison is in security.test.ts, which spies on node:crypto.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_TIMEOUT, call, expectError } from '../accounts/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const apps: TestApp[] = [];
const servers: ServerType[] = [];
async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await buildTestApp(env);
  apps.push(t);
  return t;
}
async function listen(t: TestApp): Promise<number> {
  const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  servers.push(server);
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  return (server.address() as AddressInfo).port;
}
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  for (const t of apps) await t.close();
}, APP_TIMEOUT);

let shared: TestApp;
beforeAll(async () => {
  shared = await app({ RATE_LIMIT_API_PER_MIN: '0' });
}, APP_TIMEOUT);

describe('rate limiting per client', () => {
  const login = (t: TestApp, headers: Record<string, string>) => call(t.app, 'POST', '/login', { body: { account: 'nobody_here', password: 'whatever1' }, headers });

  it('TRUST_PROXY=xff: the key is the right-most X-Forwarded-For entry; spoofing the left part changes nothing', async () => {
    const t = await app({ TRUST_PROXY: 'xff', RATE_LIMIT_AUTH_PER_MIN: '3' });
    const spoofs = ['1.2.3.4', '10.0.0.1, 10.0.0.2', 'unknown', '198.51.100.99', ' , ', '::1', '203.0.113.200, 198.51.100.7'];
    const replies = [];
    for (const spoof of spoofs) replies.push(await login(t, { 'x-forwarded-for': `${spoof}, 198.51.100.7` }));
    expect(replies.slice(0, 3).map((r) => r.body.code)).toEqual([2004, 2004, 2004]);
    for (const r of replies.slice(3)) expectError(r, 429, 1003);
    // Another client (the proxy appended another address) has its own budget.
    expectError(await login(t, { 'x-forwarded-for': '198.51.100.7, 198.51.100.8' }), 401, 2004);
  });

  it('TRUST_PROXY=fly: the key is Fly-Client-IP; X-Forwarded-For, whatever it says, changes nothing', async () => {
    const t = await app({ TRUST_PROXY: 'fly', RATE_LIMIT_AUTH_PER_MIN: '2' });
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await login(t, { 'fly-client-ip': '203.0.113.50', 'x-forwarded-for': `192.0.2.${i}` }));
    expect(replies.map((r) => r.body.code)).toEqual([2004, 2004, 1003, 1003, 1003]);
    expectError(await login(t, { 'fly-client-ip': '203.0.113.51' }), 401, 2004);
  });

  it('TRUST_PROXY=none: the key is the socket address; neither forwarding header changes it (real socket)', async () => {
    const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '3' });
    const port = await listen(t);
    const codes = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `192.0.2.${i}`, 'fly-client-ip': `198.51.100.${i}` },
        body: JSON.stringify({ account: 'nobody_here', password: 'whatever1' }),
      });
      codes.push(((await res.json()) as { code: number }).code);
    }
    expect(codes).toEqual([2004, 2004, 2004, 1003, 1003, 1003]);
  });
});

describe('security headers and CORS', () => {
  const SECURE_HEADERS: Record<string, string | RegExp> = {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'SAMEORIGIN',
    'strict-transport-security': /^max-age=\d+; includeSubDomains$/,
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  };

  it('every /api answer carries hono/secure-headers: 200, 401, 404, 405, 400, 413 and 429 alike', async () => {
    const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '1' });
    const reg = await call(t.app, 'POST', '/register', { body: { username: 'sec_headers_1', email: 'sec_headers_1@example.com', password: 'secret-pw' } });
    const answers = [
      reg,
      await call(t.app, 'GET', '/profile', { token: reg.body.data.token }),
      await call(t.app, 'GET', '/profile'),
      await call(t.app, 'GET', '/nowhere'),
      await call(t.app, 'DELETE', '/login'),
      await call(t.app, 'PUT', '/profile', { token: reg.body.data.token, body: '{"nickname":' }),
      await call(t.app, 'POST', '/refresh-token', { body: { pad: 'x'.repeat(70_000) } }),
      await call(t.app, 'POST', '/login', { body: { account: 'sec_headers_1', password: 'nope-nope' } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 404, 405, 400, 413, 429]);
    for (const a of answers) {
      for (const [name, value] of Object.entries(SECURE_HEADERS)) {
        if (typeof value === 'string') expect(a.headers.get(name), `${a.status} ${name}`).toBe(value);
        else expect(a.headers.get(name), `${a.status} ${name}`).toMatch(value);
      }
      expect(a.headers.get('x-powered-by')).toBeNull();
    }
  });

  it('/internal never answers with CORS headers: not on preflights, not on answers, with or without a token', async () => {
    const origin = { origin: 'https://evil.example' };
    const requests: [string, string, Record<string, string>][] = [
      ['OPTIONS', '/internal/v1/routers', { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-internal-token, content-type' }],
      ['OPTIONS', '/internal/v1/routers', { ...origin, 'access-control-request-method': 'POST', 'x-internal-token': shared.internalToken }],
      ['OPTIONS', '/internal/info', { ...origin, 'access-control-request-method': 'GET' }],
      ['GET', '/internal/info', { ...origin, 'x-internal-token': shared.internalToken }],
      ['GET', '/internal/info', origin],
      ['POST', '/internal/v1/routers', { ...origin, 'x-internal-token': shared.internalToken, 'content-type': 'text/plain' }],
      ['DELETE', '/internal/v1/routers/nope', { ...origin, 'x-internal-token': shared.internalToken }],
    ];
    for (const [method, path, headers] of requests) {
      const res = await shared.app.request(path, { method, headers });
      const cors = [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));
      expect({ method, path, status: res.status, cors }).toEqual({ method, path, status: res.status, cors: [] });
      // A preflight is never honoured (no 2xx), with or without the token.
      if (method === 'OPTIONS') expect([401, 404]).toContain(res.status);
      if (method === 'GET') expect(res.status).toBe(headers['x-internal-token'] ? 200 : 401);
    }
  });
});

describe('body size limits', () => {
  const API_LIMIT = 64 * 1024;
  const RELAY_LIMIT = 256 * 1024;
  /** A JSON object of exactly `bytes` bytes. */
  const bodyOf = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`;

  it('/api: 64 KiB passes, one byte more is 413 with code 1001, declared or streamed', async () => {
    const send = async (body: RequestInit['body'], headers: Record<string, string> = {}) => {
      const res = await shared.app.request('/api/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, duplex: 'half' });
      return { status: res.status, body: (await res.json()) as { code: number; data: unknown } };
    };
    expect(bodyOf(API_LIMIT).length).toBe(API_LIMIT);
    expect((await send(bodyOf(API_LIMIT))).body.code).toBe(1001); // a field error, past the limit check
    expect((await send(bodyOf(API_LIMIT))).status).toBe(400);
    expect(await send(bodyOf(API_LIMIT + 1))).toEqual({ status: 413, body: { code: 1001, message: expect.any(String), data: null } });
    const stream = new Blob([bodyOf(API_LIMIT + 1)]).stream();
    expect(await send(stream)).toEqual({ status: 413, body: { code: 1001, message: expect.any(String), data: null } });
  });

  it('/internal: 256 KiB passes, one byte more is 413 VALIDATION_ERROR, declared or streamed', async () => {
    const send = async (body: RequestInit['body']) => {
      const res = await shared.app.request('/internal/v1/routers', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-token': shared.internalToken },
        body,
        duplex: 'half',
      });
      return { status: res.status, body: (await res.json()) as { code: string; id?: string } };
    };
    // The padding is a field the relay ignores (appData itself is bounded to 4 KiB).
    const atLimit = `{"pad":"${'x'.repeat(RELAY_LIMIT - 10)}"}`;
    expect(atLimit.length).toBe(RELAY_LIMIT);
    const ok = await send(atLimit);
    expect(ok.status).toBe(201);
    await shared.app.request(`/internal/v1/routers/${ok.body.id}`, { method: 'DELETE', headers: { 'x-internal-token': shared.internalToken } });
    const over = `{"pad":"${'x'.repeat(RELAY_LIMIT - 9)}"}`;
    expect(await send(over)).toMatchObject({ status: 413, body: { code: 'VALIDATION_ERROR' } });
    expect(await send(new Blob([over]).stream())).toMatchObject({ status: 413, body: { code: 'VALIDATION_ERROR' } });
  });

  it('over a real socket, a chunked body over the limit is refused in both areas', async () => {
    const port = await listen(shared);
    const chunked = (path: string, headers: Record<string, string>, bytes: number) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', ...headers } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        const payload = bodyOf(bytes);
        for (let i = 0; i < payload.length; i += 8192) req.write(payload.slice(i, i + 8192));
        req.end();
      });
    const api = await chunked('/api/v1/auth/login', {}, API_LIMIT + 100);
    expect(api.status).toBe(413);
    expect(JSON.parse(api.body)).toMatchObject({ code: 1001, data: null });
    const relay = await chunked('/internal/v1/routers', { 'x-internal-token': shared.internalToken }, RELAY_LIMIT + 100);
    expect(relay.status).toBe(413);
    expect(JSON.parse(relay.body)).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
