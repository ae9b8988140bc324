// Concurrency and data integrity of the account API, on PGlite and (project `postgres`) on PostgreSQL:
// racing registrations, refreshes, logouts, password changes and logins. Whatever the interleaving,
// exactly one winner where one is due, no 500, and no session that should be dead still working.
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessions, users } from '../../src/db/schema.js';
import { APP_TIMEOUT, call, expectOk, register, uniqueName, type Registered, type Reply } from '../accounts/helpers.js';
import { issueToken } from '../../src/accounts/sessions/tokens.js';
import { buildTestApp, usesPostgres, type TestApp } from '../support/app.js';
import { PASSWORD_HASH_COST } from '../../src/accounts/passwords.js';
import { sleep } from './support/traffic.js';

let t: TestApp;
beforeAll(async () => {
  // argon2id at its production cost: the races below start requests all through a password change's hashing.
  t = await buildTestApp({}, { areas: { relay: false }, hashCost: PASSWORD_HASH_COST });
}, APP_TIMEOUT);
afterAll(() => t?.close(), APP_TIMEOUT);

const api = {
  register: (body: object) => call(t.app, 'POST', '/register', { body }),
  login: (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } }),
  refresh: (refresh_token: string) => call(t.app, 'POST', '/refresh-token', { body: { refresh_token } }),
  logout: (token: string) => call(t.app, 'POST', '/logout', { token }),
  profile: (token: string) => call(t.app, 'GET', '/profile', { token }),
  password: (token: string, old_password: string, new_password: string) => call(t.app, 'PUT', '/password', { token, body: { old_password, new_password } }),
};

const codes = (replies: Reply[]) => replies.map((r) => r.body.code);
const count = (values: unknown[], value: unknown) => values.filter((v) => v === value).length;
/** `ms` of delay, so racing requests start at different points of each other's work. */
const after = async <T>(ms: number, fn: () => Promise<T>) => {
  await sleep(ms);
  return fn();
};

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error('condition not reached');
    await sleep(20);
  }
  return performance.now() - started;
}

async function sessionCount(userId: number): Promise<number> {
  const [row] = await t.database.db.select({ n: sql<number>`count(*)::int` }).from(sessions).where(eq(sessions.userId, userId));
  return Number(row!.n);
}

/** A token that must be dead: both endpoints that take one answer 1002. */
async function expectDead(tokens: { token: string; refresh_token: string }) {
  expect((await api.profile(tokens.token)).body.code).toBe(1002);
  expect((await api.refresh(tokens.refresh_token)).body.code).toBe(1002);
}

describe('concurrent registrations', () => {
  it('of one username in different letter cases: exactly one account, the others 2001', async () => {
    const base = uniqueName('race');
    const variants = Array.from({ length: 20 }, (_, i) => (i % 2 ? base.toUpperCase() : base.replace(/^r/, 'R')));
    const replies = await Promise.all(variants.map((username, i) => api.register({ username, email: `${base}-${i}@example.com`, password: 'secret-pw' })));
    expect(count(codes(replies), 0)).toBe(1);
    expect(count(codes(replies), 2001)).toBe(19);
    const rows = await t.database.db.select().from(users).where(sql`lower(${users.username}) = ${base.toLowerCase()}`);
    expect(rows).toHaveLength(1);
    expect(await sessionCount(rows[0]!.id)).toBe(1);
  });

  it('of one e-mail address in different letter cases: exactly one account, the others 2002', async () => {
    const base = uniqueName('mail');
    const emails = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? `${base}@Example.COM` : i % 3 === 1 ? `${base.toUpperCase()}@example.com` : `${base}@example.com`));
    const replies = await Promise.all(emails.map((email, i) => api.register({ username: `${base}_${i}`, email, password: 'secret-pw' })));
    expect(count(codes(replies), 0)).toBe(1);
    expect(count(codes(replies), 2002)).toBe(19);
    const rows = await t.database.db.select().from(users).where(eq(users.email, `${base}@example.com`));
    expect(rows).toHaveLength(1);
    expect(await sessionCount(rows[0]!.id)).toBe(1);
  });

  it('of one username and one e-mail together: one account, the others 2001 (the username is named first)', async () => {
    const base = uniqueName('both');
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => api.register({ username: i % 2 ? base : base.toUpperCase(), email: `${base}@example.com`, password: 'secret-pw' })),
    );
    expect(count(codes(replies), 0)).toBe(1);
    expect(codes(replies).filter((c) => c !== 0)).toEqual(Array.from({ length: 11 }, () => 2001));
  });
});

describe('concurrent sessions', () => {
  it('refreshes: per session exactly one of the concurrent refreshes wins, the losers get 1002 and revoke nothing', async () => {
    const people = await Promise.all(Array.from({ length: 6 }, () => register(t.app)));
    // All sent at once: each is in flight when its session rotates (a later one would be reuse).
    const rounds = await Promise.all(people.map((p) => Promise.all(Array.from({ length: 6 }, () => api.refresh(p.tokens.refresh_token)))));
    for (const [i, replies] of rounds.entries()) {
      expect(count(codes(replies), 0)).toBe(1);
      expect(count(codes(replies), 1002)).toBe(5);
      const winner = replies.find((r) => r.body.code === 0)!.body.data;
      expectOk(await api.profile(winner.token));
      expect((await api.profile(people[i]!.tokens.token)).body.code).toBe(1002);
      expectOk(await api.refresh(winner.refresh_token));
    }
  });

  it('refresh racing logout: once logout succeeded, no token of that session works, the refreshed pair included', async () => {
    const people = await Promise.all(Array.from({ length: 12 }, () => register(t.app)));
    const outcomes = await Promise.all(
      people.map(async (p, i) => {
        const [refreshed, loggedOut] = await Promise.all([after(i % 4, () => api.refresh(p.tokens.refresh_token)), after((i >> 2) % 3, () => api.logout(p.tokens.token))]);
        return { p, refreshed, loggedOut };
      }),
    );
    for (const { p, refreshed, loggedOut } of outcomes) {
      expect([0, 1002]).toContain(refreshed.body.code);
      expect([0, 1002]).toContain(loggedOut.body.code);
      if (loggedOut.body.code === 0) {
        await expectDead(p.tokens);
        if (refreshed.body.code === 0) await expectDead(refreshed.body.data);
        expect(await sessionCount(p.id)).toBe(0);
      } else {
        // Logout came after the rotation with the old access token: the client knows it failed,
        // and the refreshed session is the one that lives.
        expect(refreshed.body.code).toBe(0);
        expectOk(await api.profile(refreshed.body.data.token));
        expect(await sessionCount(p.id)).toBe(1);
      }
    }
  });

  it('password change racing refreshes of the other sessions: every other session ends, refreshed or not', async () => {
    const owners = await Promise.all(Array.from({ length: 4 }, () => register(t.app)));
    const results = await Promise.all(
      owners.map(async (owner, i) => {
        const others = await Promise.all(Array.from({ length: 4 }, () => api.login(owner.username, owner.password)));
        const [changed, ...refreshes] = await Promise.all([
          api.password(owner.tokens.token, owner.password, `changed-pw-${i}`),
          ...others.map((o, j) => after(j * 15, () => api.refresh(o.body.data.refresh_token))),
        ]);
        return { owner, others, changed: changed, refreshes };
      }),
    );
    for (const { owner, others, changed, refreshes } of results) {
      expectOk(changed);
      for (const r of refreshes) expect([0, 1002]).toContain(r.body.code);
      for (const o of others) await expectDead(o.body.data);
      for (const r of refreshes) if (r.body.code === 0) await expectDead(r.body.data);
      expectOk(await api.profile(owner.tokens.token));
      expect(await sessionCount(owner.id)).toBe(1);
    }
  });

  it('password change racing logins with the old password: no login with the old password keeps a session', async () => {
    const owners: Registered[] = await Promise.all(Array.from({ length: 3 }, () => register(t.app)));
    const results = await Promise.all(
      owners.map(async (owner, i) => {
        // Logins start all through the change's own work (argon2 verify, hash, write), 10 ms apart.
        const [changed, ...logins] = await Promise.all([
          api.password(owner.tokens.token, owner.password, `changed-pw-${i}`),
          ...Array.from({ length: 16 }, (_, j) => after(j * 10, () => api.login(owner.username, owner.password))),
        ]);
        return { owner, changed: changed, logins };
      }),
    );
    let loginsThatWon = 0;
    for (const { owner, changed, logins } of results) {
      expectOk(changed);
      for (const login of logins) {
        expect([0, 2003]).toContain(login.body.code);
        if (login.body.code === 0) {
          loginsThatWon += 1;
          await expectDead(login.body.data);
        }
      }
      expectOk(await api.profile(owner.tokens.token));
      expect(await sessionCount(owner.id)).toBe(1);
      // The new password works; the old one does not.
      expectOk(await api.login(owner.username, `changed-pw-${results.findIndex((r) => r.owner === owner)}`));
      expect((await api.login(owner.username, owner.password)).body.code).toBe(2003);
    }
    console.log(`logins with the old password that answered 0 while the change ran: ${loginsThatWon} (all dead afterwards)`);
  });

  // Deterministic form of the race above, on PostgreSQL (PGlite runs one statement at a time): a login
  // holds the user's row (FOR SHARE) and has inserted its session when the change starts; the change
  // waits for the row, its delete ran on a snapshot without that session, and the clean-up ends it.
  it.runIf(usesPostgres())('ends a session inserted by a login that held the user row while the change waited', async () => {
    const owner = await register(t.app);
    const { db } = t.database;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    let strayId = 0;
    const login = db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from users where id = ${owner.id} for share`);
      const access = issueToken();
      const refresh = issueToken();
      const far = new Date(Date.now() + 3600_000);
      const [row] = await tx
        .insert(sessions)
        .values({ userId: owner.id, accessId: access.id, accessHash: access.digest, accessExpiresAt: far, refreshId: refresh.id, refreshHash: refresh.digest, refreshExpiresAt: far })
        .returning({ id: sessions.id });
      strayId = row!.id;
      locked();
      await released;
    });
    await isLocked;
    const change = api.password(owner.tokens.token, owner.password, 'changed-pw-held');
    // Wait until the change is blocked on the row lock (its snapshot already taken), then let the login commit.
    const waitedMs = await waitUntil(async () => {
      const rows = await db.execute(sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%update "users"%'`);
      return Number((rows as { n: number }[])[0]?.n ?? 0) > 0;
    });
    expect(waitedMs).toBeLessThan(10_000);
    release();
    await login;
    expectOk(await change);
    const left = await db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, owner.id));
    expect(left.map((r) => r.id)).not.toContain(strayId);
    expect(left).toHaveLength(1);
  });

  it('logins racing a logout of another session, and profile reads racing a password change, never answer 500', async () => {
    const owner = await register(t.app);
    const second = await api.login(owner.username, owner.password);
    const replies = await Promise.all([
      api.logout(second.body.data.token),
      ...Array.from({ length: 6 }, (_, i) => after(i * 5, () => api.profile(second.body.data.token))),
      api.password(owner.tokens.token, owner.password, 'another-pw-1'),
      ...Array.from({ length: 6 }, (_, i) => after(i * 5, () => api.profile(owner.tokens.token))),
    ]);
    expect(replies.filter((r) => r.status >= 500)).toEqual([]);
    const rows = await t.database.db.select().from(sessions).where(and(eq(sessions.userId, owner.id)));
    expect(rows).toHaveLength(1);
  });
});
