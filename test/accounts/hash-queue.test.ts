// The argon2 queue (issue 11, finding 4), in-process: lanes served lightest first, and a wait bound
// answered with server_busy instead of a longer queue; lanes whose last verification succeeded served
// in turn with the rest (issue 32, finding 13).
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/accounts/errors.js';
import { hashPassword, verifyPassword } from '../../src/accounts/passwords.js';

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
