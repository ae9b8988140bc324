// Password guessing (issue 11, finding 3): failed logins and failed password changes counted per
// account whatever the client address, unknown accounts alike; client-address limits by IPv6 /64.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKey, userKey } from '../../src/accounts/shared/login-guard.js';
import { addressKey } from '../../src/http/rate-limit.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, uniqueName, type Reply } from './helpers.js';

let nextAddress = 1;
/** A client address of its own per request: the per-account limit must hold whatever the address. */
const anyAddress = () => ({ 'x-forwarded-for': `198.51.${Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 1}` });

function expectAccountLimited(reply: Reply) {
  expectError(reply, 429, 1003);
  const retryAfter = Number(reply.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
}

describe('failed logins per account (3 per minute here), any client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ TRUST_PROXY: 'xff', LOGIN_FAILURES_PER_ACCOUNT: '3', LOGIN_FAILURE_WINDOW_S: '60' }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password }, headers: anyAddress() });

  it('answers 429 after 3 wrong passwords from 3 addresses, for the right password too, and leaves other accounts alone', async () => {
    const victim = await register(t.app);
    const other = await register(t.app);
    for (let i = 0; i < 3; i++) expectError(await login(victim.username, `guess-${i}`), 401, 2003);
    expectAccountLimited(await login(victim.username, 'guess-4'));
    // Case and the e-mail form: the same budgets (the username's here).
    expectAccountLimited(await login(victim.username.toUpperCase(), victim.password));
    expectOk(await login(other.username, other.password));
  });

  it('answers an unknown account exactly as a known one: the same codes in the same order', async () => {
    const known = await register(t.app);
    const unknown = uniqueName();
    const codes = async (account: string) => {
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) seen.push((await login(account, `guess-${i}`)).body.code);
      return seen;
    };
    expect(await codes(known.username)).toEqual([2003, 2003, 2003, 1003, 1003]);
    expect(await codes(unknown)).toEqual([2004, 2004, 2004, 1003, 1003]);
  });

  it('counts only failures: successful logins in between use no budget', async () => {
    const owner = await register(t.app);
    for (let i = 0; i < 6; i++) {
      expectOk(await login(owner.username, owner.password));
      if (i < 2) expectError(await login(owner.username, `guess-${i}`), 401, 2003);
    }
    expectError(await login(owner.username, 'guess-last'), 401, 2003);
    expectAccountLimited(await login(owner.username, 'one more'));
  });

  it('lets at most 3 of 12 concurrent guesses reach the password check', async () => {
    const victim = await register(t.app);
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => login(victim.email, `guess-${i}`)));
    const codes = replies.map((r) => r.body.code);
    expect(codes.filter((c) => c === 2003)).toHaveLength(3);
    expect(codes.filter((c) => c === 1003)).toHaveLength(9);
  });

  it('shares the budget with wrong old passwords on PUT /password (a stolen access token is no oracle)', async () => {
    const owner = await register(t.app);
    const change = (old_password: string) =>
      call(t.app, 'PUT', '/password', { token: owner.tokens.token, body: { old_password, new_password: 'new-password-1' }, headers: anyAddress() });
    expectError(await change('guess-1'), 403, 2003);
    expectError(await change('guess-2'), 403, 2003);
    expectError(await login(owner.email, 'guess-3'), 401, 2003);
    // The third failure of the username's budget was the login by e-mail: counted on both names by the change.
    expectAccountLimited(await change('guess-4'));
    expectAccountLimited(await change(owner.password));
    expectAccountLimited(await login(owner.username, owner.password));
    // Nothing changed: the password is the old one once the window has passed (checked below with a short window).
  });
});

describe('the lock never outlasts the window (LOGIN_FAILURE_WINDOW_S=2 here)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ LOGIN_FAILURES_PER_ACCOUNT: '2', LOGIN_FAILURE_WINDOW_S: '2' }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  it('lets the owner in once the window has passed, however many attempts were refused meanwhile', async () => {
    const owner = await register(t.app);
    const login = (password: string) => call(t.app, 'POST', '/login', { body: { account: owner.username, password } });
    const started = Date.now();
    expectError(await login('guess-1'), 401, 2003);
    expectError(await login('guess-2'), 401, 2003);
    // Attempts while locked do not extend the lock.
    while (Date.now() - started < 1500) {
      expectError(await login('guess-more'), 429, 1003);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 2100 - Date.now())));
    expectOk(await login(owner.password));
  });
});

describe('client-address limits key IPv6 by its /64', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ TRUST_PROXY: 'xff', RATE_LIMIT_AUTH_PER_MIN: '3' }, { areas: { relay: false } });
  }, APP_TIMEOUT);
  afterAll(() => t.close(), APP_TIMEOUT);

  const loginFrom = (address: string) => call(t.app, 'POST', '/login', { body: { account: uniqueName(), password: 'whatever1' }, headers: { 'x-forwarded-for': address } });

  it('meets 429 when the addresses rotate inside one /64, and not from another /64', async () => {
    const inside = ['2001:db8:77:1::1', '2001:db8:77:1:ffff:ffff:ffff:fffe', '2001:DB8:77:1:1234::abcd', '2001:0db8:0077:0001::9'];
    const codes = [];
    for (const address of inside) codes.push((await loginFrom(address)).body.code);
    expect(codes).toEqual([2004, 2004, 2004, 1003]);
    expectError(await loginFrom('2001:db8:77:2::1'), 401, 2004);
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', async () => {
    expectError(await loginFrom('192.0.2.77'), 401, 2004);
    expectError(await loginFrom('::ffff:192.0.2.77'), 401, 2004);
    expectError(await loginFrom('::ffff:c000:24d'), 401, 2004);
    expectError(await loginFrom('192.0.2.77'), 429, 1003);
  });

  it('keys addresses as documented', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('[2001:db8::1]')).toBe('2001:db8:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('not an address')).toBe('not an address');
  });

  it('keys an account by its id, and a name that finds none by a digest of it, never the name itself', () => {
    expect(userKey(42)).toBe('id:42');
    expect(accountKey('neo@example.com')).not.toContain('example');
    expect(accountKey('neo@example.com')).not.toBe(accountKey('neo'));
    // The database folds the name before (test/accounts/login-spellings.test.ts): the key adds no folding of its own.
    expect(accountKey('Neo')).not.toBe(accountKey('neo'));
  });
});
