// The argon2 queue (issue 11, finding 4), in-process: lanes served lightest first, and a wait bound
// answered with server_busy instead of a longer queue; lanes whose last verification succeeded served
// in turn with the rest (issue 32, finding 13). Then the password re-check of an authenticated user on a real app.
import { availableParallelism } from 'node:os';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../../src/accounts/shared/auth-error.js';
import { hashPassword, verifyPassword } from '../../src/accounts/passwords.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { PASSWORD_HASH_COST } from '../../src/accounts/passwords.js';
import { late } from '../support/late.js';
import { APP_TIMEOUT, call, expectError, expectOk, registerVerified, type Registered } from './helpers.js';

describe('password hashing queue', () => {
  it('serves a lone hash of another lane before a flood queued in one lane (one FIFO queue served it last)', async () => {
    const stored = await hashPassword('the-password');
    const finished: string[] = [];
    const flood = Array.from({ length: 12 }, (_, i) =>
      verifyPassword(stored, `guess-${i}`, { lane: 'user:flood', maxWaitMs: 60_000 }).then(() => finished.push(`flood-${i}`)),
    );
    const lone = verifyPassword(stored, 'the-password', { lane: 'account:someone', maxWaitMs: 60_000 }).then((ok) => {
      finished.push('lone');
      return ok;
    });
    expect(await lone).toBe(true);
    await Promise.all(flood);
    // At most the hashes already running when it arrived (one per slot) and one turn of the flood's lane come before it.
    expect(finished.indexOf('lone')).toBeLessThanOrEqual(4);
  });

  it('refuses with server_busy (Retry-After >= 1 s) a hash whose expected wait exceeds the bound, and runs the admitted ones', async () => {
    const stored = await hashPassword('the-password');
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => verifyPassword(stored, 'guess', { lane: 'user:burst', maxWaitMs: 150 })));
    const refused = results.filter((r) => r.status === 'rejected');
    const done = results.filter((r) => r.status === 'fulfilled');
    expect(refused.length).toBeGreaterThan(0);
    expect(done.length).toBeGreaterThan(0);
    for (const r of refused) {
      const error = (r).reason as AuthError;
      expect(error).toBeInstanceOf(AuthError);
      expect(error.reason).toBe('server_busy');
      expect(error.retryAfterS).toBeGreaterThanOrEqual(1);
    }
    // The queue drains: a hash afterwards is admitted again.
    expect(await verifyPassword(stored, 'the-password', { lane: 'user:burst', maxWaitMs: 150 })).toBe(true);
  });

  it('a lane used a moment ago is not starved by a stream of fresh lanes: its hash is answered within twice its bound', async () => {
    const stored = await hashPassword('the-password');
    const bound = 300;
    // The lane has just been served, so its recent use is higher than any fresh lane's.
    expect(await verifyPassword(stored, 'the-password', { lane: 'account:regular', maxWaitMs: 60_000 })).toBe(true);
    let flooding = true;
    const flood = (async () => {
      // Each guess names a new account: a new lane with no use yet, admitted as long as its own wait looks short.
      for (let i = 0; flooding && i < 2000; i++) {
        void verifyPassword(stored, `guess-${i}`, { lane: `account:fresh-${i}`, maxWaitMs: bound }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const outcome = await verifyPassword(stored, 'the-password', { lane: 'account:regular', maxWaitMs: bound }).then(
      (ok) => (ok ? 'verified' : 'wrong'),
      (error: unknown) => (error instanceof AuthError ? error.reason : 'other'),
    );
    const waited = performance.now() - started;
    flooding = false;
    await flood;
    // Served (aging puts it ahead of the fresh lanes once past its bound) or refused as busy; never left waiting.
    expect(['verified', 'server_busy']).toContain(outcome);
    expect(waited).toBeLessThan(2 * bound + 1500);
  }, 30_000);

  // As in src/accounts/passwords.ts: hashes that may already be running when a waiter is queued.
  const slots = Math.max(1, availableParallelism() - 1);

  /** Verifications in fresh lanes (each used once, like a flood of new account names), recording the finish order. */
  function freshLanes(stored: string, tag: string, count: number, finished: string[]) {
    return Array.from({ length: count }, (_, i) =>
      verifyPassword(stored, `guess-${i}`, { lane: `account:${tag}-${i}`, maxWaitMs: 60_000 }).then(() => finished.push(`fresh-${i}`)),
    );
  }

  it('serves a lane whose last verification succeeded before a queue of fresh lanes (by use alone it was the heaviest, served last)', async () => {
    const stored = await hashPassword('the-password');
    expect(await verifyPassword(stored, 'the-password', { lane: 'account:known-a', maxWaitMs: 60_000 })).toBe(true);
    const finished: string[] = [];
    const flood = freshLanes(stored, 'fresh-a', 12, finished);
    const known = verifyPassword(stored, 'the-password', { lane: 'account:known-a', maxWaitMs: 60_000 }).then((ok) => {
      finished.push('known');
      return ok;
    });
    expect(await known).toBe(true);
    await Promise.all(flood);
    // After the hashes already running and at most one turn of the other class.
    expect(finished.indexOf('known')).toBeLessThanOrEqual(slots + 1);
  });

  it('a failed verification takes a lane out of that class: guesses at a known name wait like the others', async () => {
    const stored = await hashPassword('the-password');
    expect(await verifyPassword(stored, 'the-password', { lane: 'account:known-b', maxWaitMs: 60_000 })).toBe(true);
    expect(await verifyPassword(stored, 'a-guess', { lane: 'account:known-b', maxWaitMs: 60_000 })).toBe(false);
    const finished: string[] = [];
    const flood = freshLanes(stored, 'fresh-b', 12, finished);
    const guess = verifyPassword(stored, 'another-guess', { lane: 'account:known-b', maxWaitMs: 60_000 }).then(() => finished.push('guess'));
    await Promise.all([...flood, guess]);
    // Used twice a moment ago, it is heavier than every fresh lane: served after all of them.
    expect(finished.at(-1)).toBe('guess');
  });

  it('the known-good class takes turns with the others: its own flood does not hold back fresh lanes', async () => {
    const stored = await hashPassword('the-password');
    expect(await verifyPassword(stored, 'the-password', { lane: 'account:known-c', maxWaitMs: 60_000 })).toBe(true);
    const finished: string[] = [];
    // Right passwords: the lane stays known-good throughout.
    const knownFlood = Array.from({ length: 12 }, () => verifyPassword(stored, 'the-password', { lane: 'account:known-c', maxWaitMs: 60_000 }).then(() => finished.push('known')));
    const fresh = freshLanes(stored, 'fresh-c', 12, finished);
    await Promise.all([...knownFlood, ...fresh]);
    // Alternating: about half of the first twelve are fresh lanes' (a strict priority for the class would give none).
    expect(finished.slice(0, 12).filter((name) => name.startsWith('fresh')).length).toBeGreaterThanOrEqual(5);
  });
});

// The password re-check of an authenticated user (DELETE /account, PUT /password, PUT /email,
// DELETE /mfa/totp, POST /reauth): one path for all, the user's own hashing lane with the login's wait bound and
// the account's failure budget, on a real app and database (PGlite; PostgreSQL too).
describe('password re-check', () => {
  // The smallest bound: with every slot taken by the flood below, any wait at all is over it, however
  // fast this machine hashes and whichever class the user's lane is in (lane names such as `user:1`
  // recur across the apps a test process builds, and the known-good class is the process's).
  const MAX_WAIT_MS = 1;
  const app = late<TestApp>('the test app');
  const t = app.value;
  beforeAll(async () => {
    // argon2id at its production cost, as the flood's hashes: the queue is what is tested.
    app.set(await buildTestApp({ PASSWORD_HASH_MAX_WAIT_MS: String(MAX_WAIT_MS), LOGIN_FAILURES_PER_ACCOUNT: '5' }, { areas: { relay: false }, hashCost: PASSWORD_HASH_COST }));
  }, APP_TIMEOUT);
  afterAll(async () => {
    await app.get()?.close();
  }, APP_TIMEOUT);

  /** A user with TOTP on, so that every re-check has something to act on. */
  async function userWithTotp(): Promise<Registered & { totp: TOTP }> {
    const user = await registerVerified(t);
    const setup = await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
    expectOk(setup);
    const totp = new TOTP({ secret: Secret.fromBase32(setup.body.data.secret) });
    expectOk(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: totp.generate() } }));
    return { ...user, totp };
  }

  /** Each action that re-checks the password, with the password given. */
  const rechecks = (user: Registered & { totp: TOTP }, password: string) =>
    [
      ['DELETE /account', () => call(t.app, 'DELETE', '/account', { token: user.tokens.token, body: { password } })],
      ['PUT /password', () => call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: password, new_password: 'another-secret-pw' } })],
      ['PUT /email', () => call(t.app, 'PUT', '/email', { token: user.tokens.token, body: { new_email: `new-${user.email}`, password } })],
      ['DELETE /mfa/totp', () => call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password, code: '000000' } })],
      ['POST /reauth', () => call(t.app, 'POST', '/reauth', { token: user.tokens.token, body: { password } })],
    ] as const;

  it('answers 1005 server_busy under a hash flood on every path (account deletion waited outside the lanes and deleted)', { timeout: 60_000 }, async () => {
    const user = await userWithTotp();
    const stored = await hashPassword('flood-password');
    // A steady queue of wrong guesses, each at a new account name (a fresh lane): every slot is taken,
    // so a re-check through the lanes meets the wait bound at once, where a hash with no lane and no
    // bound would wait its turn and act.
    let flooding = true;
    let n = 0;
    const pumps = Array.from({ length: 6 }, async () => {
      while (flooding) await verifyPassword(stored, 'guess', { lane: `account:flood-${n++}`, maxWaitMs: 60_000 }).catch(() => undefined);
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const [name, recheck] of rechecks(user, user.password)) {
        const reply = await recheck();
        expect({ name, status: reply.status, code: reply.body.code }).toEqual({ name, status: 503, code: 1005 });
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    } finally {
      flooding = false;
      await Promise.all(pumps);
    }
    // Nothing was done: the account, its password, its address and its factor are as they were.
    const login = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
    expectError(login, 401, 2007);
    expect((await call(t.app, 'GET', '/profile', { token: user.tokens.token })).body.data.email).toBe(user.email);
  });

  it('counts a wrong password on every path in the one failure budget of the account, and audits each', async () => {
    const user = await userWithTotp();
    const paths = rechecks(user, 'wrong-password');
    for (const [name, recheck] of paths) {
      const reply = await recheck();
      expect({ name, status: reply.status, code: reply.body.code }).toEqual({ name, status: 403, code: 2003 });
    }
    // Five wrong re-checks: the budget of five is spent for the login too.
    expectError(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }), 429, 1003);
    for (const [name, recheck] of paths) {
      const reply = await recheck();
      expect({ name, status: reply.status, code: reply.body.code }).toEqual({ name, status: 429, code: 1003 });
    }
    // Each wrong password audited once, with its action's type; the refusals of the spent budget write nothing.
    const res = await t.app.request(`/internal/v1/auth-events?userId=${user.id}&limit=200`, { headers: { 'X-Internal-Token': t.internalToken } });
    const events = ((await res.json()) as { events: Array<{ type: string; detail: string | null }> }).events;
    const failed = events.filter((e) => e.detail === 'wrong_password' || e.detail === 'wrong_old_password').map((e) => e.type);
    expect(failed.sort()).toEqual(['account_deletion_failed', 'email_change_failed', 'mfa_failed', 'password_change_failed', 'reauthentication_failed']);
  });
});
