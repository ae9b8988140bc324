import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientAddress, type TrustProxy } from '../../src/http/rate-limit.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, register, uniqueName } from './helpers.js';

let nextIp = 1;
/** A client address no other test in this file uses, so every test has its own counters. */
const freshIp = () => `203.0.113.${nextIp++}`;

const login = (app: TestApp['app'], headers: Record<string, string>) =>
  call(app, 'POST', '/login', { body: { account: uniqueName(), password: 'whatever1' }, headers });

function expectRateLimited(reply: Awaited<ReturnType<typeof call>>) {
  expectError(reply, 429, 1003);
  const retryAfter = Number(reply.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 0 && retryAfter <= 60).toBe(true);
  expect(reply.headers.get('ratelimit')).toMatch(/^limit=\d+, remaining=0, reset=\d+$/);
}

describe('rate limits behind a proxy that appends X-Forwarded-For', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      TRUST_PROXY: 'xff',
      RATE_LIMIT_AUTH_PER_MIN: '2',
      RATE_LIMIT_REFRESH_PER_MIN: '2',
      RATE_LIMIT_API_PER_MIN: '3',
    }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  it('allows 2 logins a minute per client, then answers 429 with 1003, Retry-After and RateLimit', async () => {
    const headers = { 'x-forwarded-for': freshIp() };
    const first = await login(t.app, headers);
    expectError(first, 401, 2004);
    expect(first.headers.get('ratelimit')).toBe('limit=2, remaining=1, reset=60');
    expect(first.headers.get('ratelimit-policy')).toBe('2;w=60');
    expectError(await login(t.app, headers), 401, 2004);
    expectRateLimited(await login(t.app, headers));
  });

  it('counts login and register against one budget', async () => {
    const headers = { 'x-forwarded-for': freshIp() };
    await login(t.app, headers);
    const username = uniqueName();
    const registered = await call(t.app, 'POST', '/register', {
      body: { username, email: `${username}@example.com`, password: 'secret-pw' },
      headers,
    });
    expect(registered.status).toBe(200);
    expectRateLimited(await call(t.app, 'POST', '/register', { body: { username: 'abc' }, headers }));
  });

  it('keeps separate counters per client', async () => {
    const a = { 'x-forwarded-for': freshIp() };
    await login(t.app, a);
    await login(t.app, a);
    expectRateLimited(await login(t.app, a));
    expectError(await login(t.app, { 'x-forwarded-for': freshIp() }), 401, 2004);
  });

  it('keys on the right-most X-Forwarded-For entry, so a forged left part does not escape the limit', async () => {
    const proxySeen = freshIp();
    for (const forged of ['198.51.100.1', '198.51.100.2']) {
      expectError(await login(t.app, { 'x-forwarded-for': `${forged}, ${proxySeen}` }), 401, 2004);
    }
    expectRateLimited(await login(t.app, { 'x-forwarded-for': `198.51.100.3, ${proxySeen}` }));
  });

  it('limits refresh-token separately (2 a minute here)', async () => {
    const headers = { 'x-forwarded-for': freshIp() };
    await login(t.app, headers);
    await login(t.app, headers);
    const refresh = () => call(t.app, 'POST', '/refresh-token', { body: { refresh_token: 'x' }, headers });
    expectError(await refresh(), 401, 1002);
    expectError(await refresh(), 401, 1002);
    expectRateLimited(await refresh());
  });

  it('limits the other endpoints (3 a minute here), counting before authentication', async () => {
    const headers = { 'x-forwarded-for': freshIp() };
    const user = await register(t.app, {});
    for (let i = 0; i < 2; i++) {
      expect((await call(t.app, 'GET', '/profile', { token: user.tokens.token, headers })).status).toBe(200);
    }
    expectError(await call(t.app, 'GET', '/profile', { headers }), 401, 1002);
    expectRateLimited(await call(t.app, 'GET', '/profile', { token: user.tokens.token, headers }));
    expectRateLimited(await call(t.app, 'PUT', '/password', { token: user.tokens.token, body: {}, headers }));
  });
});

describe('rate limits on Fly', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ TRUST_PROXY: 'fly', RATE_LIMIT_AUTH_PER_MIN: '1', RATE_LIMIT_API_PER_MIN: '0' }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  it('keys on Fly-Client-IP and ignores X-Forwarded-For', async () => {
    const fly = freshIp();
    expectError(await login(t.app, { 'fly-client-ip': fly, 'x-forwarded-for': freshIp() }), 401, 2004);
    expectRateLimited(await login(t.app, { 'fly-client-ip': fly, 'x-forwarded-for': freshIp() }));
    expectError(await login(t.app, { 'fly-client-ip': freshIp() }), 401, 2004);
  });

  it('does not limit what is configured as 0', async () => {
    const headers = { 'fly-client-ip': freshIp() };
    const replies = await Promise.all(Array.from({ length: 20 }, () => call(t.app, 'GET', '/profile', { headers })));
    expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 401));
    expect(replies[0]!.headers.get('ratelimit')).toBeNull();
  });
});

describe('without a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ RATE_LIMIT_AUTH_PER_MIN: '2' }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  it('ignores forwarding headers: without a socket (app.request) every request shares one key and nothing throws', async () => {
    await login(t.app, { 'x-forwarded-for': freshIp(), 'fly-client-ip': freshIp() });
    await login(t.app, { 'x-forwarded-for': freshIp(), 'fly-client-ip': freshIp() });
    expectRateLimited(await login(t.app, { 'x-forwarded-for': freshIp(), 'fly-client-ip': freshIp() }));
  });
});

describe('clientAddress', () => {
  const echo = (trustProxy: TrustProxy) => {
    const app = new Hono();
    app.get('/', (c) => c.text(clientAddress(c, trustProxy) ?? '(none)'));
    return app;
  };

  it('returns undefined instead of throwing when there is no socket', async () => {
    for (const mode of ['none', 'fly', 'xff'] as const) {
      expect(await (await echo(mode).request('/')).text()).toBe('(none)');
    }
  });

  it.each([
    ['xff', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2,3.3.3.3' }, '3.3.3.3'],
    ['xff', { 'x-forwarded-for': '1.1.1.1' }, '1.1.1.1'],
    ['xff', { 'x-forwarded-for': '2001:db8::1, 2001:db8::2' }, '2001:db8::2'],
    ['xff', { 'fly-client-ip': '9.9.9.9' }, '(none)'],
    ['fly', { 'fly-client-ip': ' 9.9.9.9 ' }, '9.9.9.9'],
    ['fly', { 'x-forwarded-for': '1.1.1.1' }, '(none)'],
    ['none', { 'x-forwarded-for': '1.1.1.1', 'fly-client-ip': '9.9.9.9' }, '(none)'],
  ] as const)('with TRUST_PROXY=%s and %j gives %s', async (mode, headers, expected) => {
    expect(await (await echo(mode).request('/', { headers })).text()).toBe(expected);
  });

  it('reads the socket address when served by @hono/node-server', async () => {
    const server = serve({ fetch: echo('none').fetch, port: 0, hostname: '127.0.0.1' });
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-forwarded-for': '1.1.1.1' } });
      expect(await res.text()).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
