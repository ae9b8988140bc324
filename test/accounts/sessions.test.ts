import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rotatedRefreshTokens, sessions } from '../../src/db/schema.js';
import { decodeJwt } from 'jose';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, uniqueName } from './helpers.js';

// A clock the tests can move; the app reads it for every token expiry.
let offsetMs = 0;
const now = () => new Date(Date.now() + offsetMs);

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ ACCESS_TOKEN_TTL: '600', REFRESH_TOKEN_TTL: '3600' }, { now, areas: { relay: false } });
}, APP_TIMEOUT);
afterEach(() => {
  offsetMs = 0;
});
afterAll(() => t.close(), APP_TIMEOUT);

/** The session row's access id a JWT refers to (its jti). */
const accessIdOf = (token: string) => decodeJwt(token).jti!;

/** Past the default REFRESH_REUSE_GRACE_S (10 s) after a rotation made at offset 0. */
const AFTER_GRACE_MS = 10_500;

const refresh = (refresh_token: unknown) => call(t.app, 'POST', '/refresh-token', { body: { refresh_token } });
const profile = (token: string) => call(t.app, 'GET', '/profile', { token });

describe('token lifecycle', () => {
  it('register → profile → refresh → old pair dead → new pair works → logout → dead', async () => {
    const user = await register(t.app);
    expect(user.tokens.expires_in).toBe(600);
    expectOk(await profile(user.tokens.token));

    const rotated = await refresh(user.tokens.refresh_token);
    expectOk(rotated);
    expect(Object.keys(rotated.body.data).sort()).toEqual(['expires_in', 'refresh_token', 'token']);
    expect(rotated.body.data.expires_in).toBe(600);
    expect(rotated.body.data.token).not.toBe(user.tokens.token);
    expect(rotated.body.data.refresh_token).not.toBe(user.tokens.refresh_token);

    expectError(await profile(user.tokens.token), 401, 1002);
    expectOk(await profile(rotated.body.data.token));

    expectOk(await call(t.app, 'POST', '/logout', { token: rotated.body.data.token }));
    expectError(await profile(rotated.body.data.token), 401, 1002);
    expectError(await refresh(rotated.body.data.refresh_token), 401, 1002);
    expectError(await call(t.app, 'POST', '/logout', { token: rotated.body.data.token }), 401, 1002);
  });

  it('answers logout with data null and leaves the other sessions of the user alone', async () => {
    const user = await register(t.app);
    const other = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
    const reply = await call(t.app, 'POST', '/logout', { token: user.tokens.token });
    expectOk(reply);
    expect(reply.body.data).toBeNull();
    expectOk(await profile(other.body.data.token));
  });

  it('stores only digests: no token, secret or id.secret pair appears in the session row', async () => {
    const user = await register(t.app);
    const accessId = accessIdOf(user.tokens.token);
    const [row] = await t.database.db.select().from(sessions).where(eq(sessions.accessId, accessId));
    const stored = JSON.stringify(row);
    // The access token is a JWT (its signature is what makes it): no part of it beyond its jti is stored.
    expect(stored).not.toContain(user.tokens.token.split('.')[2]);
    expect(stored).not.toContain(user.tokens.refresh_token.split('.')[1]);
    expect(row!.accessHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.refreshHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('records the client user agent on the session', async () => {
    const username = uniqueName();
    const reply = await call(t.app, 'POST', '/register', {
      body: { username, email: `${username}@example.com`, password: 'secret-pw' },
      headers: { 'user-agent': 'test-agent/1.0' },
    });
    const accessId = accessIdOf(reply.body.data.token);
    const [row] = await t.database.db.select({ userAgent: sessions.userAgent }).from(sessions).where(eq(sessions.accessId, accessId));
    expect(row!.userAgent).toBe('test-agent/1.0');
  });
});

describe('refresh', () => {
  it('detects reuse: a rotated refresh token presented again after the grace period revokes the session', async () => {
    const user = await register(t.app);
    const first = await refresh(user.tokens.refresh_token);
    expectOk(first);
    expectOk(await profile(first.body.data.token));

    offsetMs = AFTER_GRACE_MS;
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    // The whole session is gone: the pair issued by the legitimate rotation is dead too.
    expectError(await profile(first.body.data.token), 401, 1002);
    expectError(await refresh(first.body.data.refresh_token), 401, 1002);
  });

  it('leaves other sessions of the user alone when one session is revoked for reuse', async () => {
    const user = await register(t.app);
    const other = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
    expectOk(await refresh(user.tokens.refresh_token));
    offsetMs = AFTER_GRACE_MS;
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    expectOk(await profile(other.body.data.token));
  });

  it('does not revoke when a rotated id comes with a wrong secret (not proof of possession)', async () => {
    const user = await register(t.app);
    const next = await refresh(user.tokens.refresh_token);
    const [id] = user.tokens.refresh_token.split('.');
    offsetMs = AFTER_GRACE_MS;
    expectError(await refresh(`${id}.${'A'.repeat(43)}`), 401, 1002);
    expectOk(await profile(next.body.data.token));
  });

  it('lets exactly one of several concurrent refreshes with one token win', async () => {
    const user = await register(t.app);
    // Warm the connection pool so the requests really overlap on PostgreSQL.
    await Promise.all(Array.from({ length: 5 }, () => profile(user.tokens.token)));
    const replies = await Promise.all(Array.from({ length: 5 }, () => refresh(user.tokens.refresh_token)));
    const winners = replies.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(replies.filter((r) => r.status !== 200).map((r) => [r.status, r.body.code])).toEqual(Array.from({ length: 4 }, () => [401, 1002]));
    expectError(await profile(user.tokens.token), 401, 1002);
    // Losing a race is not reuse: the winner's pair keeps working.
    expectOk(await profile(winners[0]!.body.data.token));
    expectOk(await refresh(winners[0]!.body.data.refresh_token));
    const rotatedAway = await t.database.db
      .select()
      .from(rotatedRefreshTokens)
      .where(eq(rotatedRefreshTokens.refreshId, user.tokens.refresh_token.split('.')[0]!));
    expect(rotatedAway).toHaveLength(1);
  });

  it('does not revoke for a presentation that began before the rotation (a late loser of a race)', async () => {
    const user = await register(t.app);
    const winner = await refresh(user.tokens.refresh_token);
    expectOk(winner);
    // The same token, in a request that started 2 s earlier and reached the database only now.
    offsetMs = -2000;
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    offsetMs = 0;
    expectOk(await profile(winner.body.data.token));
    // Presented again after the rotation and its grace period: that is reuse.
    offsetMs = AFTER_GRACE_MS;
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    expectError(await profile(winner.body.data.token), 401, 1002);
  });

  it('does not revoke for a rotated token presented again within REFRESH_REUSE_GRACE_S (10 s) of its rotation', async () => {
    const user = await register(t.app);
    const winner = await refresh(user.tokens.refresh_token);
    expectOk(winner);
    // A retry after a lost answer, or a second tab, 9.5 s later: 1002, and the session lives on.
    offsetMs = 9_500;
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    expectOk(await profile(winner.body.data.token));
    const next = await refresh(winner.body.data.refresh_token);
    expectOk(next);
    // Presented again once the grace period of that rotation has passed: reuse, the session ends.
    offsetMs = 9_500 + AFTER_GRACE_MS;
    expectError(await refresh(winner.body.data.refresh_token), 401, 1002);
    expectError(await profile(next.body.data.token), 401, 1002);
  });

  it('forgets rotated tokens that have expired anyway, so a session refreshed for months stays bounded', async () => {
    const user = await register(t.app);
    const idOf = (token: string) => token.split('.')[0]!;
    const [session] = await t.database.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, user.id));
    const rotatedIds = async () =>
      (await t.database.db.select({ id: rotatedRefreshTokens.refreshId }).from(rotatedRefreshTokens).where(eq(rotatedRefreshTokens.sessionId, session!.id)))
        .map((r) => r.id)
        .sort();

    const first = await refresh(user.tokens.refresh_token);
    offsetMs = 1800_000;
    const second = await refresh(first.body.data.refresh_token);
    expect(await rotatedIds()).toEqual([idOf(user.tokens.refresh_token), idOf(first.body.data.refresh_token)].sort());
    // REFRESH_TOKEN_TTL is 3600 s: the registration token, rotated at 0 s, expired by 3600 s at the latest.
    offsetMs = 4000_000;
    const third = await refresh(second.body.data.refresh_token);
    expectOk(third);
    expect(await rotatedIds()).toEqual([idOf(first.body.data.refresh_token), idOf(second.body.data.refresh_token)].sort());

    // The forgotten token is simply dead; it revokes nothing. One still remembered is reuse.
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    expectOk(await profile(third.body.data.token));
    expectError(await refresh(first.body.data.refresh_token), 401, 1002);
    expectError(await profile(third.body.data.token), 401, 1002);
  });

  it('answers 1002 for an expired refresh token', async () => {
    const user = await register(t.app);
    offsetMs = 3600_000 + 1000;
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
    offsetMs = 0;
    // Gone for good, even if the clock came back.
    expectError(await refresh(user.tokens.refresh_token), 401, 1002);
  });

  it('prunes the sessions of a user whose refresh token expired when that user logs in again', async () => {
    const user = await register(t.app);
    const live = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
    const countSessions = async () => (await t.database.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, user.id))).length;
    expect(await countSessions()).toBe(2);
    // Half-way through, the second session rotates and so gets a fresh refresh lifetime; the first does not.
    offsetMs = 1800_000;
    expectOk(await refresh(live.body.data.refresh_token));
    offsetMs = 3600_000 + 1000;
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }));
    // The registration session expired and is gone; the refreshed one and the new one remain.
    expect(await countSessions()).toBe(2);
  });

  it('still refreshes after the access token expired, within the refresh lifetime', async () => {
    const user = await register(t.app);
    offsetMs = 600_000 + 1000;
    expectError(await profile(user.tokens.token), 401, 1002);
    const next = await refresh(user.tokens.refresh_token);
    expectOk(next);
    expectOk(await profile(next.body.data.token));
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 12345],
    ['malformed', 'not-a-token'],
    ['well-formed but unknown', `${'A'.repeat(22)}.${'B'.repeat(43)}`],
  ])('answers 1002 for a %s refresh token', async (_, token) => {
    const reply = await call(t.app, 'POST', '/refresh-token', { body: token === undefined ? {} : { refresh_token: token } });
    expectError(reply, 401, 1002);
  });

  it('does not accept an access token as a refresh token, nor the reverse', async () => {
    const user = await register(t.app);
    expectError(await refresh(user.tokens.token), 401, 1002);
    expectError(await profile(user.tokens.refresh_token), 401, 1002);
    expectOk(await profile(user.tokens.token));
  });
});

describe('access tokens', () => {
  it('expire after ACCESS_TOKEN_TTL seconds', async () => {
    const user = await register(t.app);
    offsetMs = 600_000 - 5000;
    expectOk(await profile(user.tokens.token));
    offsetMs = 600_000 + 1000;
    expectError(await profile(user.tokens.token), 401, 1002);
  });

  it('refreshes last_used_at at most once a minute', async () => {
    const user = await register(t.app);
    const accessId = accessIdOf(user.tokens.token);
    const lastUsed = async () =>
      (await t.database.db.select({ at: sessions.lastUsedAt }).from(sessions).where(eq(sessions.accessId, accessId)))[0]!.at.getTime();
    const opened = await lastUsed();
    offsetMs = 30_000;
    await profile(user.tokens.token);
    expect(await lastUsed()).toBe(opened);
    offsetMs = 90_000;
    await profile(user.tokens.token);
    expect(await lastUsed()).toBeGreaterThanOrEqual(opened + 90_000 - 1000);
  });

  it.each([
    ['no Authorization header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['an empty bearer', 'Bearer '],
    ['a malformed token', 'Bearer abc.def'],
    ['an unknown well-formed token', `Bearer ${'A'.repeat(22)}.${'B'.repeat(43)}`],
  ])('answer 1002 (401) with %s', async (_, authorization) => {
    const res = await t.app.request('/api/v1/auth/profile', { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await res.json()).toEqual({ code: 1002, message: expect.any(String), data: null });
  });

  it('accept the scheme name in any case', async () => {
    const user = await register(t.app);
    const res = await t.app.request('/api/v1/auth/profile', { headers: { authorization: `bearer ${user.tokens.token}` } });
    expect(res.status).toBe(200);
  });

  it('reject a token whose signature was altered', async () => {
    const user = await register(t.app);
    const [header, payload, signature] = user.tokens.token.split('.') as [string, string, string];
    const altered = `${header}.${payload}.${signature.slice(0, 5)}${signature[5] === 'A' ? 'B' : 'A'}${signature.slice(6)}`;
    expectError(await profile(altered), 401, 1002);
  });
});
