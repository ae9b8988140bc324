// Moderation through the internal API on the real database: a ban ends every session at once, refresh
// answers 1002, login answers 2006 (403, data.until) only with the right password (a wrong one is still
// 2003), an end in the past lifts it by itself, unban restores login; the audit trail has both; the
// operators' user lookups are bounded and paginated.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatTime } from '../../src/time.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, uniqueName } from './helpers.js';

let offsetMs = 0;
const now = () => new Date(Date.now() + offsetMs);
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { now, areas: { relay: false } });
}, APP_TIMEOUT);
afterEach(() => {
  offsetMs = 0;
});
afterAll(() => t.close(), APP_TIMEOUT);

async function internal(method: string, path: string, body?: unknown) {
  const res = await t.app.request(`/internal/v1${path}`, {
    method,
    headers: { 'X-Internal-Token': t.internalToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } });

describe('ban', () => {
  it('ends every session at once, refuses refresh with 1002 and login with 2006 only after the password verified', async () => {
    const user = await register(t.app);
    const second = (await login(user.username, user.password)).body.data;
    const banned = await internal('POST', `/users/${user.id}/ban`, { reason: 'abuse' });
    expect(banned.status).toBe(200);
    expect(banned.body).toMatchObject({ id: user.id, username: user.username, ban: { until: null, reason: 'abuse' } });
    for (const token of [user.tokens.token, second.token]) expectError(await call(t.app, 'GET', '/profile', { token }), 401, 1002);
    expectError(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: second.refresh_token } }), 401, 1002);

    expectError(await login(user.username, 'not-the-password'), 401, 2003);
    const refused = await login(user.username, user.password);
    expectError(refused, 403, 2006);
    expect(refused.body.data).toEqual({ until: null });

    const lifted = await internal('DELETE', `/users/${user.id}/ban`);
    expect(lifted.status).toBe(200);
    expect(lifted.body.ban).toBeNull();
    expectOk(await login(user.username, user.password));

    const trail = await internal('GET', `/auth-events?userId=${user.id}`);
    const types = (trail.body.events as Array<{ type: string; detail: string | null }>).map((e) => `${e.type}:${e.detail ?? ''}`);
    expect(types).toEqual(expect.arrayContaining(['user_banned:until lifted', 'user_unbanned:', 'session_ended:ban', 'login_failed:account_banned']));
  });

  it('with an end: 2006 tells until when, and the ban ends by itself then', async () => {
    const user = await register(t.app);
    const until = new Date(Date.now() + 3_600_000);
    const text = formatTime(until);
    const banned = await internal('POST', `/users/${user.id}/ban`, { until: text });
    expect(banned.status).toBe(200);
    expect(banned.body.ban).toMatchObject({ until: text, reason: null });
    const refused = await login(user.email, user.password);
    expectError(refused, 403, 2006);
    expect(refused.body.data).toEqual({ until: text });
    offsetMs = 3_600_000 + 2000;
    expectOk(await login(user.email, user.password));
    expect((await internal('GET', `/users/${user.id}`)).body.ban).toBeNull();
  });

  it('refuses a bad body, an end in the past, and unknown or malformed user ids', async () => {
    const user = await register(t.app);
    for (const body of [{ until: '2020-01-01 00:00:00' }, { until: '2030-02-30 00:00:00' }, { until: '2030-01-01T00:00:00Z' }, { reason: 'x'.repeat(201) }, { reason: 'a\u0000b' }, { other: 1 }, '[]', 'not json']) {
      const res = await internal('POST', `/users/${user.id}/ban`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expectOk(await call(t.app, 'GET', '/profile', { token: user.tokens.token }));
    for (const id of ['0', '-1', 'abc', '99999999999', '1.5']) {
      expect((await internal('POST', `/users/${id}/ban`, {})).status, id).toBe(400);
      expect((await internal('GET', `/users/${id}`)).status, id).toBe(400);
    }
    for (const [method, path] of [['POST', '/users/2147483647/ban'], ['DELETE', '/users/2147483647/ban'], ['GET', '/users/2147483647']] as const) {
      const res = await internal(method, path, method === 'POST' ? {} : undefined);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: { resource: 'user', id: '2147483647' } });
    }
  });

  it('a ban with no body bans until lifted; the internal token is required', async () => {
    const user = await register(t.app);
    const res = await t.app.request(`/internal/v1/users/${user.id}/ban`, { method: 'POST', headers: { 'X-Internal-Token': t.internalToken } });
    expect(res.status).toBe(200);
    expectError(await login(user.username, user.password), 403, 2006);
    expect((await t.app.request(`/internal/v1/users/${user.id}/ban`, { method: 'DELETE' })).status).toBe(401);
    expect((await t.app.request(`/internal/v1/users/${user.id}`)).status).toBe(401);
  });
});

describe('users for operators', () => {
  it('GET /users/:id: the fields, the live sessions, never a hash', async () => {
    const user = await register(t.app);
    await login(user.username, user.password);
    const res = await internal('GET', `/users/${user.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['ban', 'created_at', 'email', 'email_verified', 'id', 'identities', 'nickname', 'roles', 'sessions', 'username']);
    expect(res.body.email_verified).toBe(false); // registered, its code not typed
    expect(res.body).toMatchObject({ id: user.id, username: user.username, email: user.email, sessions: 2, ban: null });
  });

  it('GET /users?query= finds by username or e-mail prefix, case-insensitively, a page at a time', async () => {
    const prefix = uniqueName('mod');
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await register(t.app, { username: `${prefix}_${i}`, email: `${prefix}_${i}@example.com` }));
    const byEmail = await register(t.app, { username: uniqueName('other'), email: `${prefix}_mail@example.com` });
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: Record<string, any> } = await internal('GET', `/users?query=${prefix.toUpperCase()}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.users.length).toBeLessThanOrEqual(2);
      seen.push(...(page.body.users as Array<{ id: number }>).map((u) => u.id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    expect(seen.sort((a, b) => a - b)).toEqual([...made.map((u) => u.id), byEmail.id].sort((a, b) => a - b));
    // LIKE's wildcards are literal in a query.
    expect((await internal('GET', `/users?query=${encodeURIComponent('%')}`)).body.users).toEqual([]);
    expect((await internal('GET', '/users?query=_')).body.users).toEqual([]);
    for (const query of ['limit=0', 'limit=101', 'cursor=%%%', `query=${'a'.repeat(255)}`, 'query=%00%00', 'query=a%00b', 'query=a&query=b', 'other=1', 'cursor=bm90LWEtY3Vyc29y']) {
      const res = await internal('GET', `/users?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });
});
