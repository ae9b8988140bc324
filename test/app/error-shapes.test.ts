// Issue 27 #8: two error shapes, by prefix. /api/* answers the envelope {code: number, message,
// data}; /internal/* and every other path answer {code: string, message, details?}, the bare
// {"error": "not found"} of paths outside both areas is gone.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
});
afterAll(() => t.close());

it('outside /api and /internal: {code, message, details} naming the route', async () => {
  for (const [method, path] of [
    ['GET', '/nope'],
    ['GET', '/'],
    ['POST', '/healthz'],
    ['GET', '/docs/assets/swagger-ui-dist/other.js'],
    ['DELETE', '/docs'],
  ] as const) {
    const res = await t.app.request(path, { method });
    expect(res.status, `${method} ${path}`).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json(), `${method} ${path}`).toEqual({ code: 'NOT_FOUND', message: `route not found: ${method} ${path}`, details: { resource: 'route', id: `${method} ${path}` } });
  }
});

it('/internal: the same shape; /api: the envelope', async () => {
  const internal = await t.app.request('/internal/nope', { headers: { 'X-Internal-Token': t.internalToken } });
  expect(await internal.json()).toEqual({ code: 'NOT_FOUND', message: 'route not found: GET /internal/nope', details: { resource: 'route', id: 'GET /internal/nope' } });
  const api = await t.app.request('/api/v1/nope');
  expect(api.status).toBe(404);
  expect(await api.json()).toMatchObject({ code: 1004, data: null });
});
