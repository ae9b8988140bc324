// Fresh re-authentication: adding a passkey, turning TOTP on and changing the e-mail address need a
// session that signed in, or re-authenticated with POST /reauth (password, TOTP or recovery code, or
// one of its own passkeys), within REAUTH_WINDOW_S, kept on the session row; a new factor also needs a
// verified address; and a password reset of an address never verified removes every passkey and TOTP
// (the pre-hijack). A moved clock (the app's `now`), a real SMTP server, a software authenticator,
// the real database (PGlite; PostgreSQL too when TEST_DATABASE_URL is set).
import { eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { totpFactors, users, webauthnCredentials } from '../../src/db/schema.js';
import { codeOf } from '../support/smtp.js';
import { SoftAuthenticator } from '../support/webauthn.js';
import { call, expectError, expectOk, register, registerVerified, useMailingApp, type Registered } from './helpers.js';

const ORIGIN = 'http://localhost:3000';
const WINDOW_S = 300;
const { t, smtp, clock } = useMailingApp({ WEBAUTHN_ORIGINS: ORIGIN });

/** Past the re-authentication window of a session opened now. */
const later = () => {
  clock.offsetMs += (WINDOW_S + 1) * 1000;
};

const addPasskey = async (user: Registered, authenticator: SoftAuthenticator) => {
  const options = await call(t.app, 'POST', '/passkeys/register/options', { token: user.tokens.token });
  if (options.body.code !== 0) return options;
  return call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: authenticator.create(options.body.data, { origin: ORIGIN }) } });
};

async function enableTotp(user: Registered): Promise<TOTP & { recoveryCodes: string[] }> {
  const setup = await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
  expectOk(setup);
  const totp = new TOTP({ secret: Secret.fromBase32(setup.body.data.secret) });
  // The previous step's code, so the current one is still unused afterwards.
  const enabled = await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: totp.generate({ timestamp: Date.now() + clock.offsetMs - 30_000 }) } });
  expectOk(enabled);
  return Object.assign(totp, { recoveryCodes: enabled.body.data.recovery_codes });
}

const reauth = (user: Registered, body: unknown) => call(t.app, 'POST', '/reauth', { token: user.tokens.token, body });

async function events(userId: number, type: string) {
  const res = await t.app.request(`/internal/v1/auth-events?userId=${userId}&type=${type}`, { headers: { 'X-Internal-Token': t.internalToken } });
  return ((await res.json()) as { events: Array<{ type: string; detail: string | null; session_id: string | null }> }).events;
}

describe('a stolen access token of a session older than REAUTH_WINDOW_S', () => {
  it('cannot add a passkey, turn TOTP on or change the e-mail address; after POST /reauth with the password it can', async () => {
    const user = await registerVerified(t);
    later();
    const authenticator = new SoftAuthenticator();
    expectError(await addPasskey(user, authenticator), 403, 2017);
    expectError(await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token }), 403, 2017);
    expectError(await call(t.app, 'PUT', '/email', { token: user.tokens.token, body: { new_email: `new-${user.email}`, password: user.password } }), 403, 2017);
    // A refresh keeps the session's age: the rotated pair is no fresher.
    const refreshed = await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: user.tokens.refresh_token } });
    expectOk(refreshed);
    const rotated = { ...user, tokens: refreshed.body.data };
    expectError(await call(t.app, 'POST', '/mfa/totp/setup', { token: rotated.tokens.token }), 403, 2017);

    expectError(await reauth(rotated, { password: 'wrong-password' }), 403, 2003);
    const marked = await reauth(rotated, { password: user.password });
    expectOk(marked);
    expect(marked.body.data.fresh_until > marked.body.data.reauthenticated_at).toBe(true);
    expectOk(await addPasskey(rotated, authenticator));
    await enableTotp(rotated);
    expectOk(await call(t.app, 'PUT', '/email', { token: rotated.tokens.token, body: { new_email: `new-${user.email}`, password: user.password } }));
    // A refresh keeps the mark too: the session row holds it, whichever instance answers.
    const again = await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: rotated.tokens.refresh_token } });
    expectOk(again);
    expectOk(await call(t.app, 'POST', '/passkeys/register/options', { token: again.body.data.token }));
    expect((await events(user.id, 'reauthenticated')).map((e) => e.detail)).toEqual(['password']);
    expect((await events(user.id, 'reauthentication_failed')).map((e) => e.detail)).toEqual(['wrong_password']);
    // And it lasts the window only.
    later();
    expectError(await call(t.app, 'POST', '/passkeys/register/options', { token: again.body.data.token }), 403, 2017);
  });

  it('re-authenticates with a TOTP code, a recovery code or one of its own passkeys, and not with another user\'s passkey', async () => {
    const user = await registerVerified(t);
    const authenticator = new SoftAuthenticator();
    expectOk(await addPasskey(user, authenticator));
    const totp = await enableTotp(user);
    const other = await registerVerified(t);
    const othersAuthenticator = new SoftAuthenticator();
    expectOk(await addPasskey(other, othersAuthenticator));
    later();
    const setup = () => call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
    // TOTP is on already: a fresh session answers 2011, a stale one 2017.
    expectError(await setup(), 403, 2017);
    expectError(await reauth(user, { totp_code: '000000' }), 403, 2013);
    expectOk(await reauth(user, { totp_code: totp.generate({ timestamp: Date.now() + clock.offsetMs }) }));
    expectError(await setup(), 409, 2011);

    later();
    const options = await call(t.app, 'POST', '/reauth/passkey/options', { token: user.tokens.token });
    expectOk(options);
    expect((options.body.data as { allowCredentials?: unknown[] }).allowCredentials).toHaveLength(1);
    // Another user's passkey, even over this user's challenge: refused.
    expectError(await reauth(user, { passkey: othersAuthenticator.get(options.body.data, { origin: ORIGIN }) }), 403, 2014);
    const fresh = await call(t.app, 'POST', '/reauth/passkey/options', { token: user.tokens.token });
    expectOk(await reauth(user, { passkey: authenticator.get(fresh.body.data, { origin: ORIGIN }) }));
    expectError(await setup(), 409, 2011);
    // A login challenge (not bound to this user) does not re-authenticate.
    later();
    const login = await call(t.app, 'POST', '/passkeys/login/options');
    expectError(await reauth(user, { passkey: authenticator.get(login.body.data, { origin: ORIGIN }) }), 403, 2014);
    expectError(await setup(), 403, 2017);
    expectOk(await reauth(user, { recovery_code: totp.recoveryCodes[0] }));
    expectError(await reauth(user, { recovery_code: totp.recoveryCodes[0] }), 403, 2013);
    expectError(await setup(), 409, 2011);
    expect((await events(user.id, 'reauthenticated')).map((e) => e.detail).sort()).toEqual(['passkey', 'recovery_code', 'totp']);
  });

  it('asks for exactly one factor', async () => {
    const user = await registerVerified(t);
    expectError(await reauth(user, {}), 400, 1001);
    expectError(await reauth(user, { password: user.password, totp_code: '123456' }), 400, 1001);
    expectError(await reauth(user, { totp_code: '123456' }), 409, 2011);
    expectError(await call(t.app, 'POST', '/reauth', { body: { password: user.password } }), 401, 1002);
  });
});

describe('a new sign-in factor needs a verified e-mail address', () => {
  it('refuses a passkey and TOTP to a fresh session whose address is not verified (2018)', async () => {
    const user = await register(t.app);
    expectError(await addPasskey(user, new SoftAuthenticator()), 403, 2018);
    expectError(await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token }), 403, 2018);
    expectError(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: '123456' } }), 403, 2018);
  });
});

describe('a password reset of an address not verified before it (the pre-hijack)', () => {
  async function resetByMail(email: string, newPassword: string): Promise<void> {
    expectOk(await call(t.app, 'POST', '/password/forgot', { body: { email } }));
    const mail = await smtp.waitFor((m) => m.to.includes(email) && m.subject.includes('reset code'));
    expectOk(await call(t.app, 'POST', '/password/reset', { body: { email, code: codeOf(mail), new_password: newPassword } }));
  }

  it("removes the attacker's passkey and TOTP, says so in the mail and the audit trail", async () => {
    // The attacker registers with the victim's address, which nobody verifies, and could not add a
    // factor now; an account enrolled before that rule (or by any other path) is what the reset meets.
    const attacker = await register(t.app);
    expectError(await addPasskey(attacker, new SoftAuthenticator()), 403, 2018);
    await t.database.db.update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, attacker.id));
    const authenticator = new SoftAuthenticator();
    expectOk(await addPasskey(attacker, authenticator));
    await enableTotp(attacker);
    await t.database.db.update(users).set({ emailVerifiedAt: null }).where(eq(users.id, attacker.id));

    // The victim takes the account over through "forgot password" at the address.
    await resetByMail(attacker.email, 'victims-new-password');
    const mail = await smtp.waitFor((m) => m.to.includes(attacker.email) && m.subject === 'Password reset: passkeys and two-factor sign-in removed');
    expect(mail.text).toContain('had not been verified');

    // The attacker's passkey no longer signs in; the password alone does (no TOTP step).
    const options = await call(t.app, 'POST', '/passkeys/login/options');
    expectError(await call(t.app, 'POST', '/passkeys/login/verify', { body: { response: authenticator.get(options.body.data, { origin: ORIGIN }) } }), 401, 2014);
    expectOk(await call(t.app, 'POST', '/login', { body: { account: attacker.username, password: 'victims-new-password' } }));
    expect(await t.database.db.$count(webauthnCredentials, eq(webauthnCredentials.userId, attacker.id))).toBe(0);
    expect(await t.database.db.$count(totpFactors, eq(totpFactors.userId, attacker.id))).toBe(0);
    expect((await events(attacker.id, 'mfa_cleared')).map((e) => e.detail)).toEqual(['password_reset: 1 passkeys, totp removed']);
  });

  it('keeps the passkeys and TOTP of an address verified before the reset', async () => {
    const user = await registerVerified(t);
    expectOk(await addPasskey(user, new SoftAuthenticator()));
    await enableTotp(user);
    await resetByMail(user.email, 'owners-new-password');
    expectError(await call(t.app, 'POST', '/login', { body: { account: user.username, password: 'owners-new-password' } }), 401, 2007);
    expect(await t.database.db.$count(webauthnCredentials, eq(webauthnCredentials.userId, user.id))).toBe(1);
    expect(await events(user.id, 'mfa_cleared')).toEqual([]);
  });
});
