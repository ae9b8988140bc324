// Passkeys on the real database (PGlite, and PostgreSQL in the `postgres` project) with a software
// authenticator (test/support/webauthn.ts): register, list, sign in without a username, remove; the
// challenge's single use, expiry, owner and caps; the signature counter; origins and RP ID; the bounds
// of every field; the passkey cap; a ban; the audit rows and the owner's notices. The same flows in
// real Chromium: test/e2e/browser-passkeys.test.ts.
import { describe, expect, it } from 'vitest';
import { MAX_PASSKEYS_PER_USER } from '../../src/accounts/passkeys/contract.js';
import { MAX_REGISTER_CHALLENGES_PER_USER, PASSKEY_CHALLENGE_TTL_MS, Passkeys } from '../../src/accounts/passkeys/ceremonies.js';
import { webauthnChallenges } from '../../src/db/schema.js';
import { AuthKeys } from '../../src/secrets/auth-key.js';
import { openTestDatabase, TEST_AUTH_KEY_SECRET } from '../support/app.js';
import { SoftAuthenticator } from '../support/webauthn.js';
import { call, expectError, expectOk, registerVerified, useMailingApp, type Registered } from './helpers.js';

const ORIGIN = 'http://localhost:3000';
const { t, smtp, clock } = useMailingApp({ WEBAUTHN_ORIGINS: `${ORIGIN},http://app.localhost:3000` });

async function registrationOptions(user: Registered) {
  const reply = await call(t.app, 'POST', '/passkeys/register/options', { token: user.tokens.token });
  expectOk(reply);
  return reply.body.data;
}

async function loginOptions() {
  const reply = await call(t.app, 'POST', '/passkeys/login/options');
  expectOk(reply);
  return reply.body.data;
}

/** Registers a passkey of `authenticator` for `user`; returns its view. */
async function addPasskey(user: Registered, authenticator: SoftAuthenticator, name?: string) {
  const response = authenticator.create(await registrationOptions(user), { origin: ORIGIN });
  const reply = await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response, ...(name === undefined ? {} : { name }) } });
  expectOk(reply);
  return reply.body.data;
}

const signIn = (response: unknown) => call(t.app, 'POST', '/passkeys/login/verify', { body: { response } });

async function events(userId: number, type: string) {
  const res = await t.app.request(`/internal/v1/auth-events?userId=${userId}&type=${type}`, { headers: { 'X-Internal-Token': t.internalToken } });
  return ((await res.json()) as { events: Array<{ type: string; detail: string | null; session_id: string | null }> }).events;
}

describe('passkeys', () => {
  it('register, list, sign in without a username (auth_method passkey), remove; audited and mailed', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    const options = await registrationOptions(user);
    expect(options).toMatchObject({ rp: { id: 'localhost', name: 'chat-backend' }, user: { name: user.username }, authenticatorSelection: { residentKey: 'required', userVerification: 'required' } });
    const added = await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: authenticator.create(options, { origin: ORIGIN }), name: ' Laptop ' } });
    expectOk(added);
    expect(added.body.data).toEqual({ id: expect.any(String), name: 'Laptop', created_at: expect.any(String), last_used_at: null });
    await smtp.waitFor((mail) => mail.to.includes(user.email) && /passkey was added/i.test(mail.subject));

    // The next registration excludes the one there is.
    expect((await registrationOptions(user)).excludeCredentials).toEqual([expect.objectContaining({ id: authenticator.credentials[0] && Buffer.from(authenticator.credentials[0].id).toString('base64url') })]);

    const signedIn = await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN }));
    expectOk(signedIn);
    expect(signedIn.body.data.user).toMatchObject({ id: user.id, username: user.username });
    const sessions = await call(t.app, 'GET', '/sessions', { token: signedIn.body.data.token });
    expect(sessions.body.data.find((s) => s.current)?.auth_method).toBe('passkey');
    expect((await events(user.id, 'login_succeeded')).map((e) => e.detail)).toContain('passkey');
    expect((await events(user.id, 'passkey_added')).map((e) => e.detail)).toEqual([added.body.data.id]);

    const listed = await call(t.app, 'GET', '/passkeys', { token: user.tokens.token });
    expect(listed.body.data).toEqual([{ ...added.body.data, last_used_at: expect.any(String) }]);
    expect(JSON.stringify(listed.body)).not.toContain(Buffer.from(authenticator.credentials[0]!.id).toString('base64url'));

    // Another user cannot remove it (1004, as an unknown id).
    const other = await registerVerified(t);
    expectError(await call(t.app, 'DELETE', `/passkeys/${added.body.data.id}`, { token: other.tokens.token }), 404, 1004);
    expectError(await call(t.app, 'DELETE', '/passkeys/not-a-uuid', { token: user.tokens.token }), 404, 1004);
    expectOk(await call(t.app, 'DELETE', `/passkeys/${added.body.data.id}`, { token: user.tokens.token }));
    expect((await call(t.app, 'GET', '/passkeys', { token: user.tokens.token })).body.data).toEqual([]);
    await smtp.waitFor((mail) => mail.to.includes(user.email) && /passkey was removed/i.test(mail.subject));
    expect((await events(user.id, 'passkey_removed')).map((e) => e.detail)).toEqual([added.body.data.id]);
    // A removed passkey signs in no more.
    expectError(await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN })), 401, 2014);
    expect((await events(user.id, 'passkey_login_failed')).length).toBe(0);
  });

  it('a login challenge works once, only before it expires', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    await addPasskey(user, authenticator);
    const options = await loginOptions();
    expectOk(await signIn(authenticator.get(options, { origin: ORIGIN })));
    // The same challenge again (a new assertion, the counter moved on): refused.
    expectError(await signIn(authenticator.get(options, { origin: ORIGIN })), 401, 2014);
    const later = await loginOptions();
    clock.offsetMs = PASSKEY_CHALLENGE_TTL_MS + 1000;
    expectError(await signIn(authenticator.get(later, { origin: ORIGIN })), 401, 2014);
    expect((await events(user.id, 'passkey_login_failed')).map((e) => e.detail)).toEqual(['invalid_assertion', 'invalid_assertion']);
  });

  it("a registration challenge is its user's, used once, and the newest few per user are kept", async () => {
    const [alice, bob] = [await registerVerified(t), await registerVerified(t)];
    const authenticator = new SoftAuthenticator();
    const forAlice = await registrationOptions(alice);
    expectError(await call(t.app, 'POST', '/passkeys/register/verify', { token: bob.tokens.token, body: { response: authenticator.create(forAlice, { origin: ORIGIN }) } }), 400, 2014);
    // Bob's attempt did not use up Alice's challenge...
    const response = authenticator.create(forAlice, { origin: ORIGIN });
    expectOk(await call(t.app, 'POST', '/passkeys/register/verify', { token: alice.tokens.token, body: { response } }));
    // ...and hers works once.
    expectError(await call(t.app, 'POST', '/passkeys/register/verify', { token: alice.tokens.token, body: { response: authenticator.create(forAlice, { origin: ORIGIN }) } }), 400, 2014);

    const oldest = await registrationOptions(bob);
    const newer = [];
    for (let i = 0; i < MAX_REGISTER_CHALLENGES_PER_USER; i++) newer.push(await registrationOptions(bob));
    expectError(await call(t.app, 'POST', '/passkeys/register/verify', { token: bob.tokens.token, body: { response: authenticator.create(oldest, { origin: ORIGIN }) } }), 400, 2014);
    expectOk(await call(t.app, 'POST', '/passkeys/register/verify', { token: bob.tokens.token, body: { response: authenticator.create(newer[0]!, { origin: ORIGIN }) } }));
  });

  it('a signature counter at or below the stored one is refused and audited (a cloned credential)', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    await addPasskey(user, authenticator);
    const credential = authenticator.credentials[0]!;
    expectOk(await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN }, credential, 5)));
    expectError(await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN }, credential, 5)), 401, 2014);
    expectError(await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN }, credential, 3)), 401, 2014);
    expect((await events(user.id, 'passkey_login_failed')).map((e) => e.detail)).toEqual(['stale_counter', 'stale_counter']);
    // The genuine authenticator, counting on, still signs in.
    expectOk(await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN }, credential, 6)));
  });

  it('an origin not in WEBAUTHN_ORIGINS, another RP ID, or no user verification is refused', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    for (const ceremony of [{ origin: 'http://localhost:3001' }, { origin: 'https://evil.example' }, { origin: ORIGIN, rpId: 'evil.example' }, { origin: ORIGIN, userVerified: false }]) {
      const reply = await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: authenticator.create(await registrationOptions(user), ceremony) } });
      expectError(reply, 400, 2014);
    }
    expect((await call(t.app, 'GET', '/passkeys', { token: user.tokens.token })).body.data).toEqual([]);
    await addPasskey(user, authenticator);
    // The second listed origin is accepted.
    expectOk(await signIn(authenticator.get(await loginOptions(), { origin: 'http://app.localhost:3000' })));
    for (const ceremony of [{ origin: 'http://localhost:3001' }, { origin: ORIGIN, rpId: 'evil.example' }, { origin: ORIGIN, userVerified: false }]) {
      expectError(await signIn(authenticator.get(await loginOptions(), ceremony)), 401, 2014);
    }
    // A forged signature, and another user's handle: refused too.
    const forged = authenticator.get(await loginOptions(), { origin: ORIGIN });
    forged.response.signature = Buffer.from(forged.response.signature, 'base64url').reverse().toString('base64url');
    expectError(await signIn(forged), 401, 2014);
    const otherHandle = authenticator.get(await loginOptions(), { origin: ORIGIN });
    otherHandle.response.userHandle = Buffer.alloc(32, 7).toString('base64url');
    expectError(await signIn(otherHandle), 401, 2014);
    expect((await events(user.id, 'passkey_login_failed')).map((e) => e.detail).sort()).toEqual(['invalid_assertion', 'invalid_assertion', 'invalid_assertion', 'invalid_assertion', 'user_handle_mismatch']);
  });

  it('an unknown credential is refused; a registered one cannot be registered again', async () => {
    const [alice, bob] = [await registerVerified(t), await registerVerified(t)];
    const stranger = new SoftAuthenticator();
    stranger.create(await registrationOptions(alice), { origin: ORIGIN });
    expectError(await signIn(stranger.get(await loginOptions(), { origin: ORIGIN })), 401, 2014);
    const authenticator = new SoftAuthenticator();
    await addPasskey(alice, authenticator);
    const again = authenticator.create(await registrationOptions(bob), { origin: ORIGIN }, authenticator.credentials[0]!.id);
    expectError(await call(t.app, 'POST', '/passkeys/register/verify', { token: bob.tokens.token, body: { response: again } }), 409, 2016);
  });

  it(`at most ${MAX_PASSKEYS_PER_USER} passkeys per account`, { timeout: 60_000 }, async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    for (let i = 0; i < MAX_PASSKEYS_PER_USER - 1; i++) await addPasskey(user, authenticator, `key ${i}`);
    // Two ceremonies started under the cap: the first fills it, the second is refused.
    const [first, second] = [await registrationOptions(user), await registrationOptions(user)];
    expectOk(await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: authenticator.create(first, { origin: ORIGIN }) } }));
    expectError(await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: authenticator.create(second, { origin: ORIGIN }) } }), 409, 2015);
    expectError(await call(t.app, 'POST', '/passkeys/register/options', { token: user.tokens.token }), 409, 2015);
    const listed = await call(t.app, 'GET', '/passkeys', { token: user.tokens.token });
    expect(listed.body.data).toHaveLength(MAX_PASSKEYS_PER_USER);
    expect(listed.body.data.at(-1)?.name).toBe('key 0');
    expect(listed.body.data[0]?.name).toBe(`Passkey ${MAX_PASSKEYS_PER_USER}`);
  });

  it('every field is bounded before anything is looked up (1001)', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    const valid = authenticator.create(await registrationOptions(user), { origin: ORIGIN });
    const longId = Buffer.alloc(1024, 1).toString('base64url');
    const bad: Array<[string, unknown]> = [
      ['credential id over 1023 bytes', { response: { ...valid, id: longId, rawId: longId } }],
      ['not base64url', { response: { ...valid, id: 'a+b/c' } }],
      ['empty id', { response: { ...valid, id: '', rawId: '' } }],
      ['transports: 11 names', { response: { ...valid, response: { ...valid.response, transports: Array(11).fill('usb') } } }],
      ['transports: a long name', { response: { ...valid, response: { ...valid.response, transports: ['x'.repeat(33)] } } }],
      ['attestationObject over 16 KiB', { response: { ...valid, response: { ...valid.response, attestationObject: 'A'.repeat(22_000) } } }],
      ['clientDataJSON over 2 KiB', { response: { ...valid, response: { ...valid.response, clientDataJSON: 'A'.repeat(2800) } } }],
      ['publicKey over 2048 bytes', { response: { ...valid, response: { ...valid.response, publicKey: 'A'.repeat(2800) } } }],
      ['name over 64 characters', { response: valid, name: 'n'.repeat(65) }],
      ['name blank', { response: valid, name: '   ' }],
      ['name with a control character', { response: valid, name: 'a\u0007b' }],
      ['type', { response: { ...valid, type: 'password' } }],
      ['no response', {}],
    ];
    for (const [what, body] of bad) {
      const reply = await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body });
      expect({ what, status: reply.status, code: reply.body.code }).toEqual({ what, status: 400, code: 1001 });
    }
    // Unknown transports are dropped, known ones kept; the valid body still registers (its challenge was not used up).
    const ok = await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: { ...valid, response: { ...valid.response, transports: ['internal', 'quantum', 'hybrid'] } } } });
    expectOk(ok);
    const assertion = authenticator.get(await loginOptions(), { origin: ORIGIN });
    for (const [what, body] of [
      ['signature over 4096 bytes', { response: { ...assertion, response: { ...assertion.response, signature: 'A'.repeat(5500) } } }],
      ['userHandle over 64 bytes', { response: { ...assertion, response: { ...assertion.response, userHandle: 'A'.repeat(90) } } }],
      ['authenticatorData over 8 KiB', { response: { ...assertion, response: { ...assertion.response, authenticatorData: 'A'.repeat(11_000) } } }],
      ['no signature', { response: { ...assertion, response: { ...assertion.response, signature: undefined } } }],
    ] as const) {
      const reply = await signIn((body as { response: unknown }).response);
      expect({ what, status: reply.status, code: reply.body.code }).toEqual({ what, status: 400, code: 1001 });
    }
    expectOk(await signIn(assertion));
  });

  it('a banned user is answered 2006 after the passkey verified, as a password login', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    await addPasskey(user, authenticator);
    const res = await t.app.request(`/internal/v1/users/${user.id}/ban`, { method: 'POST', headers: { 'X-Internal-Token': t.internalToken, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'abuse' }) });
    expect(res.status).toBe(200);
    const reply = await signIn(authenticator.get(await loginOptions(), { origin: ORIGIN }));
    expectError(reply, 403, 2006);
    expect(reply.body.data).toEqual({ until: null });
    expect((await events(user.id, 'passkey_login_failed')).map((e) => e.detail)).toEqual(['account_banned']);
  });
});

describe('login challenges in all', () => {
  it('are capped: the oldest go first, and expired ones are swept', async () => {
    const { database, drop } = await openTestDatabase();
    try {
      let offsetMs = 0;
      const passkeys = new Passkeys({
        db: database.db,
        keys: new AuthKeys(TEST_AUTH_KEY_SECRET),
        now: () => new Date(Date.now() + offsetMs),
        webauthn: { rpId: 'localhost', rpName: 'chat-backend', origins: [ORIGIN] },
        maxLoginChallenges: 3,
      });
      const authenticator = new SoftAuthenticator();
      const issued: Array<{ challenge: string }> = [];
      for (let i = 0; i < 5; i++) issued.push(await passkeys.loginOptions());
      expect(await database.db.$count(webauthnChallenges)).toBe(3);
      // The challenges stored are digests, not the challenges.
      const stored = await database.db.select({ digest: webauthnChallenges.digest }).from(webauthnChallenges);
      expect(stored.some((row) => issued.some((o) => row.digest.includes(o.challenge)))).toBe(false);
      offsetMs = PASSKEY_CHALLENGE_TTL_MS + 1;
      await passkeys.loginOptions();
      expect(await database.db.$count(webauthnChallenges)).toBe(1);
      // An unregistered credential never gets as far as a challenge.
      authenticator.create({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'AAAA' } }, { origin: ORIGIN });
      await expect(passkeys.login(authenticator.get(issued[4]!, { origin: ORIGIN }) as never)).rejects.toMatchObject({ detail: 'unknown_credential' });
    } finally {
      await database.close();
      await drop();
    }
  });
});
