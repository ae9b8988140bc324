// Issue 27 #1: CORS on /api/* from CORS_ORIGINS (app level; test/e2e/cors-browser.test.ts runs it in
// Chromium). Unset: no CORS header at all, as before. Set: preflights answered and cached, listed
// origins echoed, others not, the rate-limit and request-id headers exposed, on errors too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const ALLOWED = 'http://app.example.test:5173';
const preflight = (origin: string, method = 'POST', headers = 'content-type') => ({
  method: 'OPTIONS',
  headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers },
});

describe('CORS_ORIGINS set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ CORS_ORIGINS: `${ALLOWED}, https://other.example.test`, CORS_MAX_AGE_S: '600', RATE_LIMIT_AUTH_PER_MIN: '2' }, { areas: { relay: false } });
  });
  afterAll(() => t.close());

  it('answers a preflight from a listed origin, cached for CORS_MAX_AGE_S', async () => {
    const res = await t.app.request('/api/v1/auth/register', preflight(ALLOWED));
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-methods')?.split(',')).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']));
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-request-id']));
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('gives an origin that is not listed no Access-Control-Allow-Origin', async () => {
    const res = await t.app.request('/api/v1/auth/register', preflight('https://evil.example.test'));
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await t.app.request('/api/v1/auth/profile', { headers: { Origin: 'https://evil.example.test' } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('exposes the rate-limit and request-id headers, on errors too (401, 429)', async () => {
    const unauthorized = await t.app.request('/api/v1/auth/profile', { headers: { Origin: ALLOWED } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(unauthorized.headers.get('access-control-expose-headers')?.split(',')).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id']);
    expect(unauthorized.headers.get('vary')).toContain('Origin');
    let limited: Response | undefined;
    for (let i = 0; i < 5 && limited?.status !== 429; i++) {
      limited = await t.app.request('/api/v1/auth/login', { method: 'POST', headers: { Origin: ALLOWED, 'content-type': 'application/json' }, body: JSON.stringify({ account: 'nobody', password: 'wrong-password-1' }) });
    }
    expect(limited!.status).toBe(429);
    expect(limited!.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(limited!.headers.get('retry-after')).not.toBeNull();
  });

  it('adds nothing outside /api', async () => {
    const res = await t.app.request('/healthz', { headers: { Origin: ALLOWED } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS unset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({}, { areas: { relay: false } });
  });
  afterAll(() => t.close());

  it('sends no CORS header, on a preflight or a request', async () => {
    const pre = await t.app.request('/api/v1/auth/register', preflight(ALLOWED));
    expect([...pre.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const get = await t.app.request('/api/v1/auth/profile', { headers: { Origin: ALLOWED } });
    expect([...get.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});

describe('the CORS_ORIGINS variable', () => {
  const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), AUTH_KEY_SECRET: 'k'.repeat(32), MEDIASOUP_ANNOUNCED_IP: '203.0.113.7', AUTH_ISSUER: 'https://chat.example' };
  it('takes origins and *, refusing * in production and anything that is not an origin', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).cors).toEqual({ origins: ['https://a.example', 'http://localhost:5173'], maxAgeS: 7200 });
    expect(loadConfig({ CORS_ORIGINS: '*' }).cors?.origins).toEqual(['*']);
    expect(loadConfig({ CORS_ORIGINS: '' }).cors).toBeUndefined();
    expect(loadConfig(production).cors).toBeUndefined();
    expect(() => loadConfig({ ...production, CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
    expect(loadConfig({ ...production, CORS_ORIGINS: 'https://a.example' }).cors?.origins).toEqual(['https://a.example']);
    for (const bad of ['https://a.example/', 'https://a.example/app', 'a.example', 'ftp://a.example', '*, https://a.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
    expect(() => loadConfig({ CORS_MAX_AGE_S: '-1' })).toThrow(/CORS_MAX_AGE_S/);
  });
});
