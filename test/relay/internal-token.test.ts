import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalToken } from '../../src/http/internal-token.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests } from './support.js';

allowSlowTests();

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { accounts: false } });
});
afterAll(() => t.close());

const unauthorized = { code: 'UNAUTHORIZED', message: expect.any(String) };

describe('X-Internal-Token', () => {
  it('is required on every /internal path', async () => {
    for (const [method, path] of [
      ['GET', '/internal/info'],
      ['POST', '/internal/v1/routers'],
      ['DELETE', '/internal/v1/routers/00000000-0000-4000-8000-000000000000'],
      ['POST', '/internal/v1/transports'],
      ['POST', '/internal/v1/consumers/x/resume'],
    ] as const) {
      const res = await t.app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(await res.json()).toEqual(unauthorized);
    }
  });

  it('refuses a wrong token, including one of the same length or a prefix', async () => {
    for (const token of ['nope', 'x'.repeat(t.internalToken.length), t.internalToken.slice(0, -1), `${t.internalToken}x`, '']) {
      const res = await t.app.request('/internal/info', { headers: { 'X-Internal-Token': token } });
      expect(res.status, JSON.stringify(token)).toBe(401);
      expect(await res.json()).toEqual(unauthorized);
    }
  });

  it('lets the right token through', async () => {
    const res = await t.app.request('/internal/info', { headers: { 'X-Internal-Token': t.internalToken } });
    expect(res.status).toBe(200);
  });

  it('answers 401 before 404 on an unknown /internal path, and 404 `route` with the token', async () => {
    const without = await t.app.request('/internal/v2/nothing');
    expect(without.status).toBe(401);
    expect(await without.json()).toEqual(unauthorized);
    const bare = await t.app.request('/internal');
    expect(bare.status).toBe(401);
    const withToken = await t.app.request('/internal/v2/nothing', { headers: { 'X-Internal-Token': t.internalToken } });
    expect(withToken.status).toBe(404);
    expect(await withToken.json()).toEqual({
      code: 'NOT_FOUND',
      message: 'route not found: GET /internal/v2/nothing',
      details: { resource: 'route', id: 'GET /internal/v2/nothing' },
    });
  });

  it('answers 401 before the body limit', async () => {
    const res = await t.app.request('/internal/v1/routers', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ appData: { blob: 'x'.repeat(300 * 1024) } }),
    });
    expect(res.status).toBe(401);
  });

  it('is not needed outside /internal', async () => {
    expect((await t.app.request('/healthz')).status).toBe(200);
    expect((await t.app.request('/readyz')).status).toBe(200);
    expect(await (await t.app.request('/readyz')).json()).toEqual({ status: 'ready', checks: { database: 'ok', media: 'ok', relay: 'ok' } });
  });
});

describe('internalToken()', () => {
  it('refuses an empty secret up front', () => {
    expect(() => internalToken({ token: '' })).toThrow();
  });

  it('throws a 401 HTTPException on a plain Hono app', async () => {
    const app = new Hono().use(internalToken({ token: 'secret' })).get('/', (c) => c.text('ok'));
    expect((await app.request('/')).status).toBe(401);
    expect((await app.request('/', { headers: { 'x-internal-token': 'secret' } })).status).toBe(200);
  });
});
