// One JSON line per request, and no secret in any line of a full account session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../src/db/schema.js';
import { createLogger } from '../../src/logger.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const lines: string[] = [];
let t: TestApp;

beforeAll(async () => {
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
  // No grace period: a rotated token presented again a few ms later is reuse here.
  t = await buildTestApp({ REFRESH_REUSE_GRACE_S: '0' }, { logger });
});
afterAll(() => t.close());

async function api(method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await t.app.request(`/api/v1/auth${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return (await res.json()) as { code: number; data: any };
}

describe('logs', () => {
  it('carry one line per request and none of the secrets of a full session', async () => {
    const password = 'Pa55word-logcheck';
    const newPassword = 'N3w-pa55word-logcheck';
    const username = `log_${Date.now().toString(36)}`;
    const secrets: string[] = [password, newPassword, t.internalToken];

    const registered = await api('POST', '/register', { username, email: `${username}@example.com`, password });
    expect(registered.code).toBe(0);
    const login = await api('POST', '/login', { account: username, password });
    expect(login.code).toBe(0);
    const wrong = await api('POST', '/login', { account: username, password: `${password}x` });
    expect(wrong.code).toBe(2003);
    secrets.push(`${password}x`);
    const refreshed = await api('POST', '/refresh-token', { refresh_token: login.data.refresh_token });
    expect(refreshed.code).toBe(0);
    // the rotated token again (not within the millisecond of the rotation, a race): reuse, which revokes that session and logs a warning
    await new Promise((resolve) => setTimeout(resolve, 5));
    const reused = await api('POST', '/refresh-token', { refresh_token: login.data.refresh_token });
    expect(reused.code).toBe(1002);
    const changed = await api('PUT', '/password', { old_password: password, new_password: newPassword }, registered.data.token);
    expect(changed.code).toBe(0);
    const profile = await api('GET', '/profile', undefined, registered.data.token);
    expect(profile.code).toBe(0);
    await t.app.request('/internal/info', { headers: { 'X-Internal-Token': t.internalToken } });
    await t.app.request('/internal/info', { headers: { 'X-Internal-Token': 'a-wrong-token-that-is-also-secret' } });
    secrets.push('a-wrong-token-that-is-also-secret');
    for (const set of [registered.data, login.data, refreshed.data]) {
      secrets.push(set.token, set.refresh_token);
      // and each half of the `<id>.<secret>` tokens
      secrets.push(...String(set.token).split('.'), ...String(set.refresh_token).split('.'));
    }

    for (const row of await t.database.db.select({ hash: users.passwordHash }).from(users)) secrets.push(row.hash);

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(8);
    for (const secret of secrets.filter((s) => s.length >= 8)) expect(log, 'a secret reached the logs').not.toContain(secret);

    const requests = lines.map((l) => JSON.parse(l)).filter((entry) => entry.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(9);
    for (const entry of requests) {
      expect(entry).toMatchObject({ requestId: expect.any(String), method: expect.any(String), path: expect.any(String), status: expect.any(Number), durationMs: expect.any(Number) });
    }
    expect(requests.some((entry) => entry.path === '/api/v1/auth/login' && entry.status === 401)).toBe(true);
    expect(lines.some((l) => /revoked/.test(l))).toBe(true);
  });

  it('uses the X-Request-Id the client sent, and echoes it', async () => {
    const res = await t.app.request('/healthz', { headers: { 'X-Request-Id': 'trace-42' } });
    expect(res.headers.get('x-request-id')).toBe('trace-42');
    expect(lines.some((l) => l.includes('"requestId":"trace-42"'))).toBe(true);
  });

  it('redacts credentials even when code logs them by mistake', () => {
    const captured: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void captured.push(line) } });
    logger.info({ req: { headers: { authorization: 'Bearer abc.def', 'x-internal-token': 'internal-secret' } }, body: { password: 'hunter22', refresh_token: 'r.t' } }, 'oops');
    expect(captured.join('')).not.toMatch(/abc\.def|internal-secret|hunter22|r\.t"/);
    expect(captured.join('')).toContain('[redacted]');
  });
});
