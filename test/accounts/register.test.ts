import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../src/db/schema.js';
import { PASSWORD_HASH_COST } from '../../src/accounts/passwords.js';
import { appWith, buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, uniqueName } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

const validBody = () => {
  const username = uniqueName();
  return { username, email: `${username}@example.com`, password: 'secret-pw' };
};

describe('POST /register', () => {
  it('creates the user and answers a token set with the short user object', async () => {
    const body = { ...validBody(), nickname: 'Neo' };
    const reply = await call(t.app, 'POST', '/register', { body });
    expectOk(reply);
    expect(reply.body.data).toEqual({
      // A JWT (header.claims.signature, base64url; test/accounts/jwt.test.ts checks its claims); the refresh token stays opaque.
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]{86}$/),
      refresh_token: expect.stringMatching(/^[\w-]{22}\.[\w-]{43}$/),
      expires_in: 7200,
      user: { id: expect.any(Number), username: body.username, email: body.email, nickname: 'Neo', avatar: '', roles: ['user'] },
    });
    expect(reply.body.data.token).not.toBe(reply.body.data.refresh_token);
  });

  it('opens a session: the access token reads the profile with the new-user defaults', async () => {
    const user = await register(t.app);
    const profile = await call(t.app, 'GET', '/profile', { token: user.tokens.token });
    expectOk(profile);
    expect(profile.body.data).toMatchObject({ id: user.id, username: user.username, avatar: '', gender: 0, phone: '', roles: ['user'] });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
  ])('uses the username as nickname when the nickname is %s', async (_, nickname) => {
    const body = { ...validBody(), ...(nickname === undefined ? {} : { nickname }) };
    const reply = await call(t.app, 'POST', '/register', { body });
    expectOk(reply);
    expect(reply.body.data.user.nickname).toBe(body.username);
  });

  it('stores the username as typed and the e-mail lower-cased', async () => {
    const name = uniqueName('MiXeD');
    const reply = await call(t.app, 'POST', '/register', {
      body: { username: name, email: `${name}@Example.COM`, password: 'secret-pw' },
    });
    expectOk(reply);
    expect(reply.body.data.user.username).toBe(name);
    expect(reply.body.data.user.email).toBe(`${name.toLowerCase()}@example.com`);
  });

  it('never returns or stores the password in clear', async () => {
    const body = validBody();
    // argon2id at its production cost (the test app's is the least argon2 takes): the parameters stored are those.
    const reply = await call(appWith(t, { hashCost: PASSWORD_HASH_COST }), 'POST', '/register', { body });
    expect(JSON.stringify(reply.body)).not.toContain(body.password);
    const [row] = await t.database.db.select({ hash: users.passwordHash }).from(users).where(eq(users.username, body.username));
    expect(row!.hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('counts password length in characters, not bytes', async () => {
    // Six emoji: 6 characters, 12 UTF-16 units, 24 bytes.
    expectOk(await call(t.app, 'POST', '/register', { body: { ...validBody(), password: '😀😀😀😀😀😀' } }));
    // 50 three-byte characters is fine; 51 is not.
    expectOk(await call(t.app, 'POST', '/register', { body: { ...validBody(), password: '密'.repeat(50) } }));
    const tooLong = await call(t.app, 'POST', '/register', { body: { ...validBody(), password: '密'.repeat(51) } });
    expectError(tooLong, 400, 1001);
    expect(tooLong.body.message).toMatch(/^password: /);
  });

  it.each([
    ['username', { username: undefined }],
    ['username', { username: 'ab' }],
    ['username', { username: 'a'.repeat(51) }],
    ['username', { username: 'has space' }],
    ['username', { username: 'dash-ed' }],
    ['username', { username: 'ünïcode' }],
    ['username', { username: 12345 }],
    ['email', { email: undefined }],
    ['email', { email: 'not-an-email' }],
    ['email', { email: `${'a'.repeat(250)}@example.com` }],
    ['password', { password: undefined }],
    ['password', { password: '12345' }],
    ['password', { password: 'x'.repeat(51) }],
    ['password', { password: 123456 }],
    ['nickname', { nickname: 'n'.repeat(51) }],
    ['nickname', { nickname: 42 }],
    ['nickname', { nickname: null }],
  ])('refuses an invalid %s with 1001 naming the field (%j)', async (field, override) => {
    const body: Record<string, unknown> = { ...validBody(), ...override };
    for (const [key, value] of Object.entries(override)) if (value === undefined) delete body[key];
    const reply = await call(t.app, 'POST', '/register', { body });
    expectError(reply, 400, 1001);
    expect(reply.body.message.startsWith(`${field}: `)).toBe(true);
  });

  it('says which rule the username breaks', async () => {
    const reply = await call(t.app, 'POST', '/register', { body: { ...validBody(), username: 'x' } });
    expect(reply.body.message).toBe('username: 3-50 letters, digits or underscores');
  });

  it('accepts the boundary lengths', async () => {
    const name3 = randomBytes(6).toString('hex').slice(0, 3);
    expectOk(await call(t.app, 'POST', '/register', { body: { ...validBody(), username: name3, email: `${uniqueName()}@example.com` } }));
    const name50 = uniqueName().padEnd(50, 'x');
    expectOk(await call(t.app, 'POST', '/register', { body: { ...validBody(), username: name50, password: 'q7#Lp2' } }));
  });

  it('refuses a username taken in any letter case with 2001', async () => {
    const first = await register(t.app);
    for (const variant of [first.username, first.username.toUpperCase()]) {
      const reply = await call(t.app, 'POST', '/register', { body: { ...validBody(), username: variant } });
      expectError(reply, 409, 2001);
    }
  });

  it('refuses an e-mail registered in any letter case with 2002', async () => {
    const first = await register(t.app);
    for (const variant of [first.email, first.email.toUpperCase()]) {
      const reply = await call(t.app, 'POST', '/register', { body: { ...validBody(), email: variant } });
      expectError(reply, 409, 2002);
    }
  });

  it('lets exactly one of 20 concurrent registrations of one username through; the rest get 2001', async () => {
    const username = uniqueName();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(t.app, 'POST', '/register', {
          body: { username: i % 2 ? username : username.toUpperCase(), email: `${username}.${i}@example.com`, password: 'secret-pw' },
        }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    const others = replies.filter((r) => r.status !== 200);
    expect(others.map((r) => [r.status, r.body.code])).toEqual(Array.from({ length: 19 }, () => [409, 2001]));
  });

  it('maps concurrent registrations of one e-mail to 2002, never 500', async () => {
    const email = `${uniqueName()}@example.com`;
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => call(t.app, 'POST', '/register', { body: { ...validBody(), email } })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status !== 200).map((r) => r.body.code)).toEqual(Array.from({ length: 7 }, () => 2002));
  });

  it('ignores fields it does not know (roles cannot be chosen)', async () => {
    const reply = await call(t.app, 'POST', '/register', { body: { ...validBody(), roles: ['admin'] } });
    expectOk(reply);
    expect(reply.body.data.user.roles).toEqual(['user']);
  });
});
