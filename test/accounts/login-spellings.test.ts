// The failure budget of an account name follows what the database's lookup finds: every spelling that
// reaches an account (`İ` for `i`, the Kelvin sign for `k`, any case, the e-mail address) counts in
// that account's one budget, and spellings of an unknown name that the lookup would equate share one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, type Reply } from './helpers.js';

/** A name with letters that have other spellings: the hex tail has neither `i` nor `k`. */
const nameWithIandK = () => `kiki_${Math.random().toString(16).slice(2, 10)}`;

/** Spellings the database's lower() folds to `name` (PostgreSQL and PGlite alike: `İ` to `i`, U+212A to `k`). */
function foldedAlike(name: string): string[] {
  return [name, name.toUpperCase(), name.replaceAll('i', 'İ'), name.replaceAll('k', '\u212A'), name.replace('k', '\u212A').replace('i', 'İ').toUpperCase()];
}

const codes = (replies: Reply[]) => replies.map((reply) => reply.body.code);

describe('the failure budget of a name is the account its lookup finds (3 failures per window here)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ LOGIN_FAILURES_PER_ACCOUNT: '3', LOGIN_FAILURE_WINDOW_S: '600' }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } });
  async function inTurn(accounts: string[], password: string): Promise<Reply[]> {
    const replies = [];
    for (const account of accounts) replies.push(await login(account, password));
    return replies;
  }

  it('counts wrong passwords under every spelling of a username or e-mail in one budget, and the lock holds for each', async () => {
    const owner = await register(t.app, { username: nameWithIandK() });
    const spellings = [...foldedAlike(owner.username), ...foldedAlike(owner.email)];
    // Each spelling reaches the account (a success uses no budget).
    for (const reply of await inTurn(spellings, owner.password)) expectOk(reply);

    expect(codes(await inTurn(spellings, 'wrong-guess'))).toEqual([2003, 2003, 2003, ...spellings.slice(3).map(() => 1003)]);
    for (const reply of await inTurn(spellings, owner.password)) expectError(reply, 429, 1003);
  });

  it('answers a decomposed spelling (NFD) as the name it is: one the lookup does not fold to the account', async () => {
    const owner = await register(t.app, { username: nameWithIandK() });
    const composed = owner.username.replaceAll('i', 'İ');
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    expectOk(await login(composed, owner.password));
    expectError(await login(decomposed, owner.password), 401, 2004);
    // Spent through the composed spelling: the account is locked, the decomposed name never was the account.
    expect(codes(await inTurn([composed, composed, composed, owner.username], 'wrong-guess'))).toEqual([2003, 2003, 2003, 1003]);
    expectError(await login(decomposed.normalize('NFC'), owner.password), 429, 1003);
    expectError(await login(decomposed, owner.password), 401, 2004);
  });

  it('gives the spellings of an unknown name that the lookup would equate one budget, as a known one', async () => {
    const unknown = nameWithIandK();
    const spellings = foldedAlike(unknown);
    expect(codes(await inTurn(spellings, 'wrong-guess'))).toEqual([2004, 2004, 2004, 1003, 1003]);
    const address = foldedAlike(`${nameWithIandK()}@example.com`);
    expect(codes(await inTurn(address, 'wrong-guess'))).toEqual([2004, 2004, 2004, 1003, 1003]);
  });
});
