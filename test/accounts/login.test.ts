import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_HASH_COST } from '../../src/accounts/passwords.js';
import { appWith, buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, uniqueName, type Registered } from './helpers.js';

let t: TestApp;
let alice: Registered;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
  alice = await register(t.app, { username: uniqueName('Alice'), nickname: 'Ally' });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

describe('POST /login', () => {
  it.each([
    ['the username as typed', () => alice.username],
    ['the username in another case', () => alice.username.toUpperCase()],
    ['the e-mail address', () => alice.email],
    ['the e-mail address in another case', () => alice.email.toUpperCase()],
  ])('logs in with %s', async (_, account) => {
    const reply = await call(t.app, 'POST', '/login', { body: { account: account(), password: alice.password } });
    expectOk(reply);
    expect(reply.body.data).toEqual({
      token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 7200,
      user: { id: alice.id, username: alice.username, email: alice.email.toLowerCase(), nickname: 'Ally', avatar: '', roles: ['user'] },
    });
  });

  it('opens a new session each time; earlier sessions keep working', async () => {
    const first = await call(t.app, 'POST', '/login', { body: { account: alice.username, password: alice.password } });
    const second = await call(t.app, 'POST', '/login', { body: { account: alice.username, password: alice.password } });
    expect(first.body.data.token).not.toBe(second.body.data.token);
    for (const token of [first.body.data.token, second.body.data.token, alice.tokens.token]) {
      expectOk(await call(t.app, 'GET', '/profile', { token }));
    }
  });

  it('answers 2003 (401) for a wrong password', async () => {
    expectError(await call(t.app, 'POST', '/login', { body: { account: alice.username, password: 'wrong-password' } }), 401, 2003);
    expectError(await call(t.app, 'POST', '/login', { body: { account: alice.email, password: alice.password.toUpperCase() } }), 401, 2003);
  });

  it('answers 2003 for a password that could never have been registered', async () => {
    expectError(await call(t.app, 'POST', '/login', { body: { account: alice.username, password: 'x'.repeat(200) } }), 401, 2003);
  });

  it('answers 2004 (401) for an unknown username or e-mail address', async () => {
    expectError(await call(t.app, 'POST', '/login', { body: { account: uniqueName(), password: 'whatever1' } }), 401, 2004);
    expectError(await call(t.app, 'POST', '/login', { body: { account: `${uniqueName()}@example.com`, password: 'whatever1' } }), 401, 2004);
  });

  it('does not treat a username that looks like an e-mail local part as an e-mail', async () => {
    // `account` with an @ is looked up by e-mail only.
    expectError(await call(t.app, 'POST', '/login', { body: { account: `${alice.username}@`, password: alice.password } }), 401, 2004);
  });

  it('spends comparable time on unknown accounts and on wrong passwords', async () => {
    // argon2id at its production cost (the test app's is the least argon2 takes): a user registered
    // there, and the dummy hash made at that cost.
    const production = appWith(t, { hashCost: PASSWORD_HASH_COST });
    const known = await register(production);
    // Only refusals of the credentials count: beside the bulk's load the hash queue may answer 503 at
    // once (server_busy), which took no hash and made an unknown account look fast (seen in CI).
    const time = async (account: string) => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const started = performance.now();
        const res = await call(production, 'POST', '/login', { body: { account, password: 'wrong-password' } });
        const ms = performance.now() - started;
        if (res.status !== 503) {
          expect(res.status).toBe(401);
          return ms;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error('the hash queue answered busy 10 times');
    };
    await time(uniqueName()); // the dummy hash is computed on first use
    const unknown = Math.min(await time(uniqueName()), await time(uniqueName()), await time(uniqueName()));
    const knownMs = Math.min(await time(known.username), await time(known.username), await time(known.username));
    // Both run one argon2id verification; without the dummy the unknown path would take ~1 ms.
    expect(unknown).toBeGreaterThan(knownMs / 3);
  });

  it.each([
    ['account', { password: 'secret-pw' }],
    ['account', { account: '', password: 'secret-pw' }],
    ['account', { account: 7, password: 'secret-pw' }],
    ['password', { account: 'someone' }],
    ['password', { account: 'someone', password: '' }],
    ['password', { account: 'someone', password: ['secret-pw'] }],
  ])('refuses a missing or invalid %s with 1001', async (field, body) => {
    const reply = await call(t.app, 'POST', '/login', { body });
    expectError(reply, 400, 1001);
    expect(reply.body.message.startsWith(`${field}: `)).toBe(true);
  });
});
