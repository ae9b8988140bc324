// Sessions as devices (issue 16): GET /sessions, DELETE /sessions/:id, POST /logout {scope}.
import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authEvents, sessions } from '../../src/db/schema.js';
import { MAX_SESSIONS_PER_USER } from '../../src/accounts/devices/directory.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, TIME_FORMAT, type Registered, type TokenSet } from './helpers.js';

let offsetMs = 0;
const now = () => new Date(Date.now() + offsetMs);

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ TRUST_PROXY: 'xff' }, { now, areas: { relay: false } });
}, APP_TIMEOUT);
afterEach(() => {
  offsetMs = 0;
});
afterAll(() => t.close(), APP_TIMEOUT);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function login(user: Registered, headers: Record<string, string> = {}): Promise<TokenSet> {
  const reply = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password }, headers });
  expectOk(reply);
  return reply.body.data;
}
const list = (token: string) => call(t.app, 'GET', '/sessions', { token });
const profile = (token: string) => call(t.app, 'GET', '/profile', { token });
const refresh = (refresh_token: string) => call(t.app, 'POST', '/refresh-token', { body: { refresh_token } });
const endSession = (token: string, id: string) => call(t.app, 'DELETE', `/sessions/${id}`, { token });

/** Both tokens of a set: alive (true) or dead at once (false). The refresh check rotates, so it comes last. */
async function expectAlive(tokens: TokenSet, alive: boolean) {
  expect((await profile(tokens.token)).body.code).toBe(alive ? 0 : 1002);
  expect((await refresh(tokens.refresh_token)).body.code).toBe(alive ? 0 : 1002);
}

describe('GET /sessions', () => {
  it('lists every device of the caller, newest first, with label, address and times; only the caller is current', async () => {
    const user = await register(t.app, {});
    offsetMs = 2000;
    const phone = await login(user, { 'user-agent': '  ChatApp/2.1 (iPhone; iOS 18)  ', 'x-forwarded-for': '198.51.100.7' });
    offsetMs = 4000;
    const laptop = await login(user, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0', 'x-forwarded-for': '2001:db8::1' });
    const reply = await list(phone.token);
    expectOk(reply);
    const devices = reply.body.data as Array<Record<string, unknown>>;
    expect(devices).toHaveLength(3);
    for (const d of devices) {
      expect(Object.keys(d).sort()).toEqual(['auth_method', 'created_at', 'current', 'device', 'id', 'ip', 'last_used_at']);
      expect(d.id).toMatch(UUID);
      expect(d.created_at).toMatch(TIME_FORMAT);
      expect(d.last_used_at).toMatch(TIME_FORMAT);
    }
    expect(devices.map((d) => d.device)).toEqual(['Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0', 'ChatApp/2.1 (iPhone; iOS 18)', null]);
    expect(devices.map((d) => d.ip)).toEqual(['2001:db8::1', '198.51.100.7', null]);
    expect(devices.map((d) => d.current)).toEqual([false, true, false]);
    expect(devices.map((d) => d.auth_method)).toEqual(['password', 'password', 'password']); // registered or logged in with the password
    // The id is no token part and no digest.
    const text = JSON.stringify(reply.body);
    for (const token of [user.tokens, phone, laptop].flatMap((s) => [s.token, s.refresh_token])) {
      for (const part of token.split('.')) expect(text).not.toContain(part);
    }
    const rows = await t.database.db.select().from(sessions).where(eq(sessions.userId, user.id));
    for (const row of rows) for (const d of devices) expect([row.accessHash, row.refreshHash, row.accessId, row.refreshId, String(row.id)]).not.toContain(d.id);
  });

  it("never shows another user's sessions", async () => {
    const a = await register(t.app);
    const b = await register(t.app);
    await login(b);
    const reply = await list(a.tokens.token);
    expect(reply.body.data).toHaveLength(1);
  });

  it('keeps at most 200 characters of the User-Agent, trimmed', async () => {
    const user = await register(t.app);
    const long = `Agent/1.0 ${'x'.repeat(400)}`;
    const s = await login(user, { 'user-agent': `  \t${long}` });
    const mine = ((await list(s.token)).body.data as Array<{ current: boolean; device: string }>).find((d) => d.current)!;
    expect(mine.device).toBe(long.slice(0, 200));
  });

  it('updates last_used_at at most once a minute', async () => {
    const user = await register(t.app);
    const first = ((await list(user.tokens.token)).body.data as Array<{ last_used_at: string }>)[0]!.last_used_at;
    offsetMs = 30_000;
    expect(((await list(user.tokens.token)).body.data as Array<{ last_used_at: string }>)[0]!.last_used_at).toBe(first);
    offsetMs = 61_000;
    await profile(user.tokens.token);
    expect(((await list(user.tokens.token)).body.data as Array<{ last_used_at: string }>)[0]!.last_used_at).not.toBe(first);
  });

  it('needs an access token', async () => {
    expectError(await call(t.app, 'GET', '/sessions'), 401, 1002);
    expectError(await list('nope.nope'), 401, 1002);
  });

  it(`keeps at most ${MAX_SESSIONS_PER_USER} sessions per user: a login beyond ends the least recently used`, async () => {
    const user = await register(t.app);
    const old = new Date(Date.now() - 3600_000);
    const later = new Date(Date.now() + 3600_000);
    await t.database.db.insert(sessions).values(
      Array.from({ length: MAX_SESSIONS_PER_USER }, (_, i) => ({
        userId: user.id,
        accessId: randomBytes(16).toString('base64url'),
        accessHash: randomBytes(32).toString('hex'),
        accessExpiresAt: later,
        refreshId: randomBytes(16).toString('base64url'),
        refreshHash: randomBytes(32).toString('hex'),
        refreshExpiresAt: later,
        createdAt: old,
        lastUsedAt: new Date(old.getTime() + i * 1000),
      })),
    );
    const fresh = await login(user);
    const rows = await t.database.db.select({ lastUsedAt: sessions.lastUsedAt }).from(sessions).where(eq(sessions.userId, user.id));
    expect(rows).toHaveLength(MAX_SESSIONS_PER_USER);
    // The two least recently used (the first two inserted) ended; the new one and the registration's stay.
    const oldest = Math.min(...rows.map((r) => r.lastUsedAt.getTime()));
    expect(oldest).toBe(old.getTime() + 2000);
    await expectAlive(user.tokens, true);
    await expectAlive(fresh, true);
    const ended = await t.database.db.select().from(authEvents).where(eq(authEvents.userId, user.id));
    expect(ended.filter((e) => e.type === 'session_ended' && e.detail === 'session_limit')).toHaveLength(2);
  });
});

describe('DELETE /sessions/:id', () => {
  it('ends another device of the caller: its access and refresh tokens stop working at once', async () => {
    const user = await register(t.app);
    const other = await login(user, { 'user-agent': 'tablet' });
    const devices = (await list(user.tokens.token)).body.data as Array<{ id: string; device: string }>;
    const tablet = devices.find((d) => d.device === 'tablet')!;
    const reply = await endSession(user.tokens.token, tablet.id);
    expectOk(reply);
    expect(reply.body.data).toBeNull();
    await expectAlive(other, false);
    expect((await list(user.tokens.token)).body.data).toHaveLength(1);
    // Ended already: now unknown.
    expectError(await endSession(user.tokens.token, tablet.id), 404, 1004);
    const events = await t.database.db.select().from(authEvents).where(eq(authEvents.sessionId, tablet.id));
    expect(events.map((e) => e.type).sort()).toEqual(['login_succeeded', 'session_ended']);
    expect(events.find((e) => e.type === 'session_ended')).toMatchObject({ type: 'session_ended', detail: 'user', userId: user.id });
  });

  it('can end the current session too (then it is logged out)', async () => {
    const user = await register(t.app);
    const [mine] = (await list(user.tokens.token)).body.data as Array<{ id: string }>;
    expectOk(await endSession(user.tokens.token, mine!.id));
    await expectAlive(user.tokens, false);
  });

  it("answers another user's session exactly like an unknown one, and leaves it alone", async () => {
    const a = await register(t.app);
    const b = await register(t.app);
    const [bSession] = (await list(b.tokens.token)).body.data as Array<{ id: string }>;
    const foreign = await endSession(a.tokens.token, bSession!.id);
    const unknown = await endSession(a.tokens.token, randomUUID());
    expectError(foreign, 404, 1004);
    expect(foreign.body).toEqual(unknown.body);
    expect(foreign.status).toBe(unknown.status);
    await expectAlive(b.tokens, true);
  });

  it('answers a malformed id as an unknown session', async () => {
    const user = await register(t.app);
    for (const id of ['1', 'not-a-uuid', encodeURIComponent("' or 1=1 --"), 'x'.repeat(3000), '%00']) {
      expectError(await endSession(user.tokens.token, id), 404, 1004);
    }
    await expectAlive(user.tokens, true);
  });

  it('needs an access token', async () => {
    expectError(await call(t.app, 'DELETE', `/sessions/${randomUUID()}`), 401, 1002);
  });
});

describe('POST /logout {scope}', () => {
  async function threeDevices() {
    const user = await register(t.app);
    return { user, a: user.tokens, b: await login(user), c: await login(user) };
  }

  it('without a body ends only the current session, as before', async () => {
    const { a, b, c } = await threeDevices();
    expectOk(await call(t.app, 'POST', '/logout', { token: a.token }));
    await expectAlive(a, false);
    await expectAlive(b, true);
    await expectAlive(c, true);
  });

  it('scope current ends only the current session', async () => {
    const { a, b } = await threeDevices();
    expectOk(await call(t.app, 'POST', '/logout', { token: a.token, body: { scope: 'current' } }));
    await expectAlive(a, false);
    await expectAlive(b, true);
  });

  it('scope others ends every other session and keeps the current one', async () => {
    const { user, a, b, c } = await threeDevices();
    const other = await register(t.app);
    expectOk(await call(t.app, 'POST', '/logout', { token: a.token, body: { scope: 'others' } }));
    await expectAlive(b, false);
    await expectAlive(c, false);
    await expectAlive(other.tokens, true);
    expect((await list(a.token)).body.data).toHaveLength(1);
    const ended = await t.database.db.select().from(authEvents).where(eq(authEvents.userId, user.id));
    expect(ended.filter((e) => e.type === 'session_ended' && e.detail === 'user')).toHaveLength(2);
    await expectAlive(a, true);
  });

  it('scope all ends every session of the caller', async () => {
    const { a, b, c } = await threeDevices();
    expectOk(await call(t.app, 'POST', '/logout', { token: a.token, body: { scope: 'all' } }));
    for (const s of [a, b, c]) await expectAlive(s, false);
  });

  it('refuses an unknown scope with 1001 and ends nothing', async () => {
    const { a, b } = await threeDevices();
    for (const scope of ['everything', '', 'ALL', null, 1, ['all'], 'x'.repeat(5000)]) {
      const reply = await call(t.app, 'POST', '/logout', { token: a.token, body: { scope } });
      expectError(reply, 400, 1001);
      expect(reply.body.message).toMatch(/^scope: /);
    }
    await expectAlive(a, true);
    await expectAlive(b, true);
  });

  it('treats a body that is not a JSON object with a scope as no body', async () => {
    for (const body of ['not json', '[]', '"all"', '{"other":1}', '{}']) {
      const { a, b } = await threeDevices();
      expectOk(await call(t.app, 'POST', '/logout', { token: a.token, body }));
      await expectAlive(a, false);
      await expectAlive(b, true);
    }
    const { a, b } = await threeDevices();
    expectOk(await call(t.app, 'POST', '/logout', { token: a.token, body: '{"scope":"all"}', headers: { 'content-type': 'text/plain' } }));
    await expectAlive(b, true);
  });
});
