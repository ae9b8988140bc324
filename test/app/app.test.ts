import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
});
afterAll(() => t.close());

describe('app shell', () => {
  it('answers /healthz without a token', async () => {
    const res = await t.app.request('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('echoes a request id', async () => {
    const res = await t.app.request('/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    const generated = await t.app.request('/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown /api routes in the envelope with 1004', async () => {
    const res = await t.app.request('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 1004, message: expect.any(String), data: null });
  });
});
