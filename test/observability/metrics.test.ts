import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  // No grace period: a rotated token presented again a few ms later is reuse here.
  t = await buildTestApp({ RATE_LIMIT_AUTH_PER_MIN: '4', REFRESH_REUSE_GRACE_S: '0' });
});
afterAll(() => t.close());

const token = () => ({ 'X-Internal-Token': t.internalToken });

async function scrape(): Promise<string> {
  const res = await t.app.request('/internal/metrics', { headers: token() });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /internal/metrics', () => {
  it('needs the internal token', async () => {
    expect((await t.app.request('/internal/metrics')).status).toBe(401);
    expect((await t.app.request('/internal/metrics', { headers: { 'X-Internal-Token': 'nope' } })).status).toBe(401);
  });

  it('counts requests by route pattern, never by raw path', async () => {
    const created = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { ...token(), 'content-type': 'application/json' }, body: '{}' });
    const { id } = (await created.json()) as { id: string };
    expect((await t.app.request(`/internal/v1/routers/${id}`, { method: 'DELETE', headers: token() })).status).toBe(204);
    const text = await scrape();
    expect(value(text, 'http_request_duration_seconds_count{method="POST",route="/internal/v1/routers",status="201"}')).toBe(1);
    expect(value(text, 'http_request_duration_seconds_count{method="DELETE",route="/internal/v1/routers/:id",status="204"}')).toBe(1);
    expect(text).not.toContain(id);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/internal\/v1\/routers",status="201"\}/);
  });

  it('counts login and refresh outcomes, reuse and rate limiting included', async () => {
    const json = { 'content-type': 'application/json' };
    const username = `m_${Date.now().toString(36)}`;
    const reg = await t.app.request('/api/v1/auth/register', { method: 'POST', headers: json, body: JSON.stringify({ username, email: `${username}@example.com`, password: 'secret-123' }) });
    const registered = (await reg.json()) as { data: { refresh_token: string } };
    const login = (body: object) => t.app.request('/api/v1/auth/login', { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect((await login({ account: username, password: 'secret-123' })).status).toBe(200);
    expect((await login({ account: username, password: 'wrong-123' })).status).toBe(401);
    expect((await login({ account: username, password: 'wrong-123' })).status).toBe(401);
    // register + 3 logins used the 4 per minute: the next login is rate limited
    expect((await login({ account: username, password: 'secret-123' })).status).toBe(429);

    const refresh = (refresh_token: string) =>
      t.app.request('/api/v1/auth/refresh-token', { method: 'POST', headers: json, body: JSON.stringify({ refresh_token }) });
    expect((await refresh(registered.data.refresh_token)).status).toBe(200);
    // Not within the millisecond of the rotation, which counts as a race.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await refresh(registered.data.refresh_token)).status).toBe(401); // reuse: revokes the session

    const text = await scrape();
    expect(value(text, 'auth_outcomes_total{action="login",outcome="ok"}')).toBe(1);
    expect(value(text, 'auth_outcomes_total{action="login",outcome="failed"}')).toBe(2);
    expect(value(text, 'auth_outcomes_total{action="login",outcome="rate_limited"}')).toBe(1);
    expect(value(text, 'auth_outcomes_total{action="refresh",outcome="ok"}')).toBe(1);
    expect(value(text, 'auth_outcomes_total{action="refresh",outcome="reused"}')).toBe(1);
  });

  it('reports media resources, worker usage, restarts and process metrics', async () => {
    const created = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { ...token(), 'content-type': 'application/json' }, body: '{}' });
    const { id: routerId } = (await created.json()) as { id: string };
    const transport = await t.app.request('/internal/v1/transports', {
      method: 'POST',
      headers: { ...token(), 'content-type': 'application/json' },
      body: JSON.stringify({ routerId, direction: 'send' }),
    });
    expect(transport.status).toBe(201);
    const text = await scrape();
    expect(value(text, 'media_resources{worker="0",kind="routers"}')).toBe(1);
    expect(value(text, 'media_resources{worker="0",kind="transports"}')).toBe(1);
    expect(value(text, 'media_resources{worker="0",kind="consumers"}')).toBe(0);
    expect(value(text, 'media_workers_alive')).toBe(1);
    expect(value(text, 'media_worker_restarts_total{worker="0"}')).toBe(0);
    expect(value(text, 'media_worker_cpu_seconds{worker="0"}')).toBeGreaterThan(0);
    expect(value(text, 'media_worker_max_rss_bytes{worker="0"}')).toBeGreaterThan(1024 * 1024);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    await t.app.request(`/internal/v1/routers/${routerId}`, { method: 'DELETE', headers: token() });
    expect(value(await scrape(), 'media_resources{worker="0",kind="transports"}')).toBe(0);
  });
});
