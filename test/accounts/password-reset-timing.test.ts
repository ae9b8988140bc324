// Forgotten password (issue 16): an unknown e-mail gets the same answer in the same time as a known
// one. A measurement, so it runs alone (the timing project); the rest of the feature is in
// password-reset.test.ts.
import { describe, expect, it } from 'vitest';
import { FORGOT_ANSWER_MS } from '../../src/accounts/reset/service.js';
import { call, expectOk, register, useMailingApp } from './helpers.js';

const { t } = useMailingApp({ MAIL_FROM: 'Chat <no-reply@chat.test>' });

const forgot = (email: unknown, app = t.app) => call(app, 'POST', '/password/forgot', { body: { email } });

describe('POST /password/forgot', () => {
  it('takes the same time for known and unknown e-mails (measured, interleaved)', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => register(t.app)));
    const known: number[] = [];
    const unknown: number[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [i, user] of users.entries()) {
        const order = (round + i) % 2 === 0 ? ['known', 'unknown'] : ['unknown', 'known'];
        for (const kind of order) {
          const started = performance.now();
          expectOk(await forgot(kind === 'known' ? user.email : `ghost_${i}_${round}_${Date.now()}@example.com`));
          (kind === 'known' ? known : unknown).push(performance.now() - started);
        }
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const figures = { knownMedianMs: Math.round(median(known)), unknownMedianMs: Math.round(median(unknown)), n: known.length };
    console.info('forgot-password timing', figures);
    expect(Math.min(...known, ...unknown)).toBeGreaterThanOrEqual(FORGOT_ANSWER_MS - 5);
    // Both answer after the fixed floor; the medians differ by scheduling noise only.
    expect(Math.abs(figures.knownMedianMs - figures.unknownMedianMs)).toBeLessThan(40);
  });
});
