// New-password rules (issue 16): not among the 10,000 most common passwords, not the username or e-mail.
import { dictionary } from '@zxcvbn-ts/language-common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMON_PASSWORD_COUNT, isCommonPassword } from '../../src/accounts/shared/password-policy.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, uniqueName } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

describe('the common-password list', () => {
  it('holds the 10,000 most common passwords of the list, in any letter case, and nothing beyond', () => {
    const ranked = dictionary['passwords-common'];
    expect(ranked.length).toBeGreaterThan(COMMON_PASSWORD_COUNT);
    for (const p of ranked.slice(0, COMMON_PASSWORD_COUNT)) expect(isCommonPassword(p), p).toBe(true);
    for (const p of ['123456', 'password', 'qwerty', 'PASSWORD', 'Dragon', 'iloveyou', 'trustno1']) expect(isCommonPassword(p), p).toBe(true);
    const top = new Set(ranked.slice(0, COMMON_PASSWORD_COUNT).map((p) => p.toLowerCase()));
    const beyond = ranked.slice(COMMON_PASSWORD_COUNT).filter((p) => !top.has(p.toLowerCase()));
    expect(beyond.slice(0, 50).some(isCommonPassword)).toBe(false);
    for (const p of ['secret-pw', 'correct horse battery', 'q7#Lp2', 'follow the rabbit']) expect(isCommonPassword(p), p).toBe(false);
  });
});

describe('new passwords', () => {
  const body = (overrides: Record<string, string>) => {
    const username = uniqueName();
    return { username, email: `${username}@example.com`, password: 'secret-pw', ...overrides };
  };

  it('register refuses a common password with 1001', async () => {
    for (const password of ['123456', 'password', 'Password1', 'qwerty123', 'iloveyou']) {
      const reply = await call(t.app, 'POST', '/register', { body: body({ password }) });
      expectError(reply, 400, 1001);
      expect(reply.body.message).toBe('password: must not be one of the 10,000 most common passwords');
    }
  });

  it('register refuses the username or the e-mail as the password, in any letter case', async () => {
    const username = uniqueName('Pw');
    for (const password of [username, username.toUpperCase(), `${username}@example.com`.toUpperCase()]) {
      const reply = await call(t.app, 'POST', '/register', { body: { username, email: `${username}@example.com`, password } });
      expectError(reply, 400, 1001);
      expect(reply.body.message).toBe('password: must differ from the username and the e-mail address');
    }
  });

  it('change refuses them too, and the old password keeps working', async () => {
    const user = await register(t.app);
    for (const new_password of ['letmein', 'abc123', user.username, user.email]) {
      const reply = await call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: user.password, new_password } });
      expectError(reply, 400, 1001);
      expect(reply.body.message).toMatch(/^new_password: /);
    }
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }));
  });
});
