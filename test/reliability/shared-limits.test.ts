// Two server processes on one PostgreSQL and one private Redis (issue 15): every rate limit, the
// per-account failure limit included, holds across both; refresh and registration races across
// instances keep one winner; Redis killed mid-run degrades the limits to per-instance counting
// without a 5xx or a long wait, says so, and sharing resumes once Redis is back.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnRedis } from '../support/redis-server.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';
import { freePort, SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AUTH_PER_MIN = 10;
const FAILURES_PER_ACCOUNT = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Reply {
  status: number;
  code: number;
  data: any;
  ms: number;
  headers: Headers;
}

async function api(server: ServerProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const started = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { code: number; data: unknown };
  return { status: res.status, code: json.code, data: json.data, ms: performance.now() - started, headers: res.headers };
}

let nextAddress = 1;
const address = () => `2001:db8:${(nextAddress++).toString(16)}::1`;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function internal(server: ServerProcess, path: string): Promise<string> {
  const res = await fetch(`${server.url}${path}`, { headers: { 'x-internal-token': SERVER_TOKEN } });
  return res.text();
}

async function storeMode(server: ServerProcess): Promise<string> {
  return (JSON.parse(await internal(server, '/internal/info')) as { rate_limits: { store: string } }).rate_limits.store;
}

describe.skipIf(skipWithout(REDIS_SERVER))('rate limits shared by two instances through Redis', () => {
  let redis: OwnRedis;
  let dbName: string;
  let a: ServerProcess;
  let b: ServerProcess;
  const both = () => [a, b];

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    dbName = `test_shared_${randomBytes(5).toString('hex')}`;
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${dbName}`);
    await admin.end();
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    const env = {
      DATABASE_URL: url.toString(),
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      TRUST_PROXY: 'xff',
      RATE_LIMIT_AUTH_PER_MIN: String(AUTH_PER_MIN),
      RATE_LIMIT_REFRESH_PER_MIN: '100000',
      LOGIN_FAILURES_PER_ACCOUNT: String(FAILURES_PER_ACCOUNT),
      LOG_LEVEL: 'warn',
      // One issuer for both, as instances behind one address have: the default (http://localhost:<PORT>)
      // differs between two processes on one machine, and each refuses the other's tokens (docs/account-api.md).
      AUTH_ISSUER: 'https://chat.example.test',
    };
    // One after the other: the first migrates the database.
    a = await startServer(env);
    b = await startServer(env);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.kill();
    if (dbName) {
      const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end();
    }
  }, 60_000);

  /** `count` login attempts from one address at once, alternating between the instances. */
  async function loginBurst(ip: string, count: number): Promise<Reply[]> {
    return Promise.all(Array.from({ length: count }, (_, i) => api(both()[i % 2]!, 'POST', '/api/v1/auth/login', { account: `nobody_${i}`, password: 'x-password' }, from(ip))));
  }

  async function registerUser(server: ServerProcess) {
    const username = `shared_${randomBytes(5).toString('hex')}`;
    const reply = await api(server, 'POST', '/api/v1/auth/register', { username, email: `${username}@example.com`, password: 'right-password' }, from(address()));
    expect(reply.code).toBe(0);
    return { username, tokens: reply.data as { token: string; refresh_token: string } };
  }

  it('counts in Redis on both (/internal/info says so)', async () => {
    expect(await storeMode(a)).toBe('redis');
    expect(await storeMode(b)).toBe('redis');
  });

  it(`a limit of ${AUTH_PER_MIN}/min holds exactly ${AUTH_PER_MIN} across both instances under 30 concurrent requests`, async () => {
    const replies = await loginBurst(address(), 30);
    const codes = replies.map((r) => r.code);
    expect(codes.filter((c) => c === 2004)).toHaveLength(AUTH_PER_MIN);
    expect(codes.filter((c) => c === 1003)).toHaveLength(30 - AUTH_PER_MIN);
    // Over real HTTP, every answer carries the draft-7 headers; a refusal also Retry-After.
    for (const reply of replies) {
      expect(reply.headers.get('ratelimit-policy')).toBe(`${AUTH_PER_MIN};w=60`);
      expect(reply.headers.get('ratelimit')).toMatch(/^limit=\d+, remaining=\d+, reset=\d+$/);
      if (reply.code === 1003) {
        expect(reply.headers.get('ratelimit')).toMatch(/, remaining=0, /);
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(0);
        expect(Number(reply.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      } else expect(reply.headers.get('retry-after')).toBeNull();
    }
  });

  it(`the per-account failure limit (${FAILURES_PER_ACCOUNT}) holds across instances and client addresses`, async () => {
    const victim = await registerUser(a);
    const replies = await Promise.all(
      Array.from({ length: 14 }, (_, i) => api(both()[i % 2]!, 'POST', '/api/v1/auth/login', { account: victim.username, password: `guess-${i}` }, from(address()))),
    );
    const codes = replies.map((r) => r.code);
    expect(codes.filter((c) => c === 2003)).toHaveLength(FAILURES_PER_ACCOUNT);
    expect(codes.filter((c) => c === 1003)).toHaveLength(14 - FAILURES_PER_ACCOUNT);
    // Unknown names alike.
    const unknown = `nobody_${randomBytes(4).toString('hex')}`;
    const unknownCodes = (
      await Promise.all(Array.from({ length: 14 }, (_, i) => api(both()[i % 2]!, 'POST', '/api/v1/auth/login', { account: unknown, password: `guess-${i}` }, from(address()))))
    ).map((r) => r.code);
    expect(unknownCodes.filter((c) => c === 2004)).toHaveLength(FAILURES_PER_ACCOUNT);
    expect(unknownCodes.filter((c) => c === 1003)).toHaveLength(14 - FAILURES_PER_ACCOUNT);
  });

  it('concurrent refreshes of one token sent to both instances: exactly one wins, the session survives (10 rounds of 6)', async () => {
    const user = await registerUser(a);
    let tokens = user.tokens;
    for (let round = 0; round < 10; round++) {
      const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => api(both()[i % 2]!, 'POST', '/api/v1/auth/refresh-token', { refresh_token: tokens.refresh_token })));
      const winners = replies.filter((r) => r.code === 0);
      expect(winners).toHaveLength(1);
      expect(replies.filter((r) => r.code !== 0 && r.code !== 1002)).toEqual([]);
      tokens = winners[0]!.data;
      for (const server of both()) expect((await api(server, 'GET', '/api/v1/auth/profile', undefined, { authorization: `Bearer ${tokens.token}` })).code).toBe(0);
    }
  });

  it('a registration race across instances: exactly one wins', async () => {
    const username = `race_${randomBytes(5).toString('hex')}`;
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api(both()[i % 2]!, 'POST', '/api/v1/auth/register', { username, email: `${username}_${i}@example.com`, password: 'right-password' }, from(address())),
      ),
    );
    expect(replies.map((r) => r.code).sort()).toEqual([0, 2001, 2001, 2001, 2001, 2001]);
  });

  it('Redis killed mid-run: no 5xx, no wait beyond the 150 ms bound, per-instance limits, metric and log; sharing resumes when it is back', async () => {
    // Cheap limited requests (a malformed refresh token: no database work) on both, before and during the outage.
    const probe = (server: ServerProcess) => api(server, 'POST', '/api/v1/auth/refresh-token', { refresh_token: 'not-a-token' }, from(address()));
    const before: Reply[] = [];
    for (let i = 0; i < 20; i++) before.push(await probe(both()[i % 2]!));
    const baselineMs = Math.max(...before.map((r) => r.ms));

    let running = true;
    const during: Reply[] = [];
    const traffic = (async () => {
      for (let i = 0; running; i++) {
        during.push(await probe(both()[i % 2]!));
        await sleep(10);
      }
    })();
    await sleep(200);
    await redis.kill();
    await sleep(1500);
    running = false;
    await traffic;
    console.log(`outage: ${during.length} requests, max ${Math.round(Math.max(...during.map((r) => r.ms)))} ms (baseline max ${Math.round(baselineMs)} ms)`);
    expect(during.filter((r) => r.status >= 500)).toEqual([]);
    expect(during.map((r) => r.code).filter((c) => c !== 1002)).toEqual([]);
    expect(Math.max(...during.map((r) => r.ms))).toBeLessThan(baselineMs + 200);

    for (const server of both()) {
      expect(await storeMode(server)).toBe('memory-fallback');
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const metrics = await internal(server, '/internal/metrics');
      expect(metrics).toMatch(/^rate_limit_store_fallback_total 1$/m);
      expect(metrics).toMatch(/^rate_limit_store_mode\{mode="memory-fallback"\} 1$/m);
      expect(server.logLines().filter((l) => l.msg.startsWith('rate limits: Redis unavailable'))).toHaveLength(1);
    }

    // Per-instance counting at the configured limit: one address gets the limit on each instance, not more.
    const ip = address();
    const onA = await Promise.all(Array.from({ length: 15 }, (_, i) => api(a, 'POST', '/api/v1/auth/login', { account: `nobody_${i}`, password: 'x-password' }, from(ip))));
    const onB = await Promise.all(Array.from({ length: 15 }, (_, i) => api(b, 'POST', '/api/v1/auth/login', { account: `nobody_${i}`, password: 'x-password' }, from(ip))));
    for (const replies of [onA, onB]) {
      expect(replies.filter((r) => r.code === 2004)).toHaveLength(AUTH_PER_MIN);
      expect(replies.filter((r) => r.code === 1003)).toHaveLength(15 - AUTH_PER_MIN);
    }

    // Back: both return to Redis within a few probes, log it, and share again.
    await redis.start();
    const until = Date.now() + 10_000;
    while ((await storeMode(a)) !== 'redis' || (await storeMode(b)) !== 'redis') {
      if (Date.now() > until) throw new Error('did not return to Redis');
      await sleep(100);
    }
    for (const server of both()) {
      expect(server.logLines().filter((l) => l.msg.startsWith('rate limits: Redis answers again'))).toHaveLength(1);
      expect(await internal(server, '/internal/metrics')).toMatch(/^rate_limit_store_mode\{mode="redis"\} 1$/m);
    }
    const replies = await loginBurst(address(), 30);
    expect(replies.filter((r) => r.code === 2004)).toHaveLength(AUTH_PER_MIN);

    // A Redis that stops answering (not gone): each request waits at most the 150 ms command bound, once.
    redis.pause(true);
    try {
      const stalled: Reply[] = [];
      for (let i = 0; i < 20; i++) stalled.push(await probe(both()[i % 2]!));
      console.log(`stalled Redis: max ${Math.round(Math.max(...stalled.map((r) => r.ms)))} ms`);
      expect(stalled.filter((r) => r.status >= 500)).toEqual([]);
      expect(Math.max(...stalled.map((r) => r.ms))).toBeLessThan(baselineMs + 200);
      for (const server of both()) expect(await storeMode(server)).toBe('memory-fallback');
    } finally {
      redis.pause(false);
    }
    const back = Date.now() + 10_000;
    while ((await storeMode(a)) !== 'redis' || (await storeMode(b)) !== 'redis') {
      if (Date.now() > back) throw new Error('did not return to Redis after the stall');
      await sleep(100);
    }
  }, 60_000);
});

describe('REDIS_URL set but Redis absent at start-up', () => {
  it('starts in the per-instance fallback, ready, with its limits in force', async () => {
    const port = await freePort();
    const server = await startServer({ REDIS_URL: `redis://127.0.0.1:${port}`, TRUST_PROXY: 'xff', RATE_LIMIT_AUTH_PER_MIN: '3' });
    try {
      expect(await storeMode(server)).toBe('memory-fallback');
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const ip = address();
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push((await api(server, 'POST', '/api/v1/auth/login', { account: `nobody_${i}`, password: 'x-password' }, from(ip))).code);
      expect(codes).toEqual([2004, 2004, 2004, 1003]);
      expect(server.logLines().filter((l) => l.msg.startsWith('rate limits: Redis unavailable'))).toHaveLength(1);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
