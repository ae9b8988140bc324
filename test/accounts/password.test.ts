import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } });

describe('PUT /password', () => {
  it('changes the password, keeps the current session and revokes every other one', async () => {
    const user = await register(t.app);
    const other = await login(user.username, user.password);
    const third = await login(user.email, user.password);

    const reply = await call(t.app, 'PUT', '/password', {
      token: user.tokens.token,
      body: { old_password: user.password, new_password: 'brand-new-pw' },
    });
    expectOk(reply);
    expect(reply.body.data).toBeNull();

    expectOk(await call(t.app, 'GET', '/profile', { token: user.tokens.token }));
    expectOk(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: user.tokens.refresh_token } }));
    for (const session of [other, third]) {
      expectError(await call(t.app, 'GET', '/profile', { token: session.body.data.token }), 401, 1002);
      expectError(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: session.body.data.refresh_token } }), 401, 1002);
    }

    expectError(await login(user.username, user.password), 401, 2003);
    expectOk(await login(user.username, 'brand-new-pw'));
  });

  it("leaves other users' sessions alone", async () => {
    const user = await register(t.app);
    const bystander = await register(t.app);
    await call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: user.password, new_password: 'brand-new-pw' } });
    expectOk(await call(t.app, 'GET', '/profile', { token: bystander.tokens.token }));
  });

  it('answers 2003 (403) for a wrong old password and changes nothing', async () => {
    const user = await register(t.app);
    const other = await login(user.username, user.password);
    const reply = await call(t.app, 'PUT', '/password', {
      token: user.tokens.token,
      body: { old_password: 'not-my-password', new_password: 'brand-new-pw' },
    });
    expectError(reply, 403, 2003);
    expectOk(await login(user.username, user.password));
    expectOk(await call(t.app, 'GET', '/profile', { token: other.body.data.token }));
  });

  it('lets only one of two concurrent changes from the same old password succeed', async () => {
    const user = await register(t.app);
    const replies = await Promise.all(
      ['first-new-pw', 'second-new-pw'].map((new_password) =>
        call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: user.password, new_password } }),
      ),
    );
    const codes = replies.map((r) => r.body.code).sort();
    expect(codes).toEqual([0, 2003]);
  });

  it.each([
    ['old_password', { new_password: 'brand-new-pw' }],
    ['old_password', { old_password: '', new_password: 'brand-new-pw' }],
    ['new_password', { old_password: 'secret-pw' }],
    ['new_password', { old_password: 'secret-pw', new_password: '12345' }],
    ['new_password', { old_password: 'secret-pw', new_password: 'x'.repeat(51) }],
    ['new_password', { old_password: 'secret-pw', new_password: 1234567 }],
  ])('refuses a missing or invalid %s with 1001', async (field, body) => {
    const user = await register(t.app);
    const reply = await call(t.app, 'PUT', '/password', { token: user.tokens.token, body });
    expectError(reply, 400, 1001);
    expect(reply.body.message.startsWith(`${field}: `)).toBe(true);
  });

  it('needs an access token', async () => {
    expectError(await call(t.app, 'PUT', '/password', { body: { old_password: 'secret-pw', new_password: 'brand-new-pw' } }), 401, 1002);
  });
});
