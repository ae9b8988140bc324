// Sign-in with OpenID Connect providers, native flow: ID tokens of an Apple-style provider (signed
// with jose, its discovery and JWKS served on loopback; nonce as SHA-256) on the real database
// (PGlite; PostgreSQL in the `postgres` project): which account, the refusals (each with its code and
// nothing created), bans and TOTP as for a password login, linking, unlinking, a first password, the
// events and audit rows; and a provider whose issuer is unreachable answering 2021 while the rest runs.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { base64url, SignJWT } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { eventLog, oidcIdentities, users } from '../../src/db/schema.js';
import type { IdentityView } from '../../src/accounts/oidc/contract.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { call, expectError, expectOk, registerVerified, useMailingApp, APP_TIMEOUT } from './helpers.js';

const CLIENT_ID = 'com.example.chat';
const env: Record<string, string> = {};
let apple: TestIssuer;
beforeAll(async () => {
  apple = await startTestIssuer();
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  Object.assign(env, {
    // As in production: https, so a cookie may be SameSite=None (Secure).
    AUTH_ISSUER: 'https://chat.example.com',
    OIDC_PROVIDERS: 'apple,acme',
    OIDC_APPLE_ISSUER: apple.issuer,
    OIDC_APPLE_CLIENT_ID: CLIENT_ID,
    OIDC_APPLE_NONCE: 'sha256',
    OIDC_APPLE_TEAM_ID: 'TEAM123456',
    OIDC_APPLE_KEY_ID: 'KEY1234567',
    OIDC_APPLE_PRIVATE_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    // Nothing listens there: discovery fails, the provider answers 2021, the rest runs.
    OIDC_ACME_ISSUER: 'http://127.0.0.1:9',
    OIDC_ACME_CLIENT_ID: 'chat',
    OIDC_ACME_LABEL: 'Acme SSO',
    OIDC_REDIRECT_URIS: 'https://app.example.com/signed-in',
  });
}, APP_TIMEOUT);
afterAll(() => apple?.close());
const { t, smtp, clock } = useMailingApp(env);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newNonce = () => randomBytes(16).toString('base64url');
const newSub = () => `00${randomBytes(8).toString('hex')}.apple`;

async function appleToken(claims: Record<string, unknown>, options?: Parameters<TestIssuer['sign']>[1]) {
  const nonce = newNonce();
  const id_token = await apple.sign({ aud: CLIENT_ID, sub: newSub(), nonce: sha256(nonce), nonce_supported: true, ...claims }, options);
  return { id_token, nonce };
}

const signIn = (body: unknown) => call(t.app, 'POST', '/oidc/apple/id-token', { body });

async function countUsers() {
  return (await t.database.db.select({ id: users.id }).from(users)).length;
}

async function audit(userId: number | undefined, type: string) {
  const res = await t.app.request(`/internal/v1/auth-events?type=${type}${userId === undefined ? '' : `&userId=${userId}`}`, { headers: { 'X-Internal-Token': t.internalToken } });
  return ((await res.json()) as { events: Array<{ type: string; detail: string | null; user_id: number | null }> }).events;
}

async function eventsOf(userId: number, type: string) {
  const rows = await t.database.db.select().from(eventLog).where(eq(eventLog.type, type));
  return rows.map((r) => JSON.parse(r.payload) as { userId: number; provider: string; identityId: string }).filter((e) => e.userId === userId);
}

describe('the native flow (POST /oidc/{provider}/id-token)', () => {
  it('creates an account for a new identity (no password, the e-mail verified only when the provider says "true"), then signs in to it', async () => {
    const email = `${randomBytes(4).toString('hex')}@privaterelay.example`;
    const token = await appleToken({ email, email_verified: 'true' });
    const first = await signIn(token);
    expectOk(first);
    const userId = first.body.data.user.id;
    const [row] = await t.database.db.select().from(users).where(eq(users.id, userId));
    expect(row!.email).toBe(email);
    expect(row!.emailVerifiedAt).not.toBeNull();
    expect(row!.passwordHash).toBe('!');
    // The same identity again: the same account.
    const sub = JSON.parse(Buffer.from(token.id_token.split('.')[1]!, 'base64url').toString()).sub as string;
    const nonce = newNonce();
    const again = await signIn({ id_token: await apple.sign({ aud: CLIENT_ID, sub, nonce: sha256(nonce), email, email_verified: true }), nonce });
    expectOk(again);
    expect(again.body.data.user.id).toBe(userId);
    expect((await audit(userId, 'login_succeeded')).map((e) => e.detail)).toEqual(['oidc:apple', 'oidc:apple']);
    const sessions = await call(t.app, 'GET', '/sessions', { token: again.body.data.token });
    expect(sessions.body.data.map((s) => s.auth_method)).toEqual(['oidc:apple', 'oidc:apple']);
    expect((await eventsOf(userId, 'auth.identity.linked')).map((e) => e.provider)).toEqual(['apple']);
    // No password: a password login fails as a wrong one.
    expectError(await call(t.app, 'POST', '/login', { body: { account: email, password: '!' } }), 401, 2003);
  });

  it('does not mark an unverified e-mail verified', async () => {
    const email = `${randomBytes(4).toString('hex')}@example.net`;
    const reply = await signIn(await appleToken({ email, email_verified: 'false' }));
    expectOk(reply);
    const [row] = await t.database.db.select().from(users).where(eq(users.id, reply.body.data.user.id));
    expect(row!.emailVerifiedAt).toBeNull();
  });

  it('refuses, each with 2019 and nothing created: wrong aud, expired, wrong nonce, the raw nonce where the hash is expected, alg none, HS256 keyed with the public key, a key not in the JWKS, another issuer', async () => {
    const before = await countUsers();
    const email = `${randomBytes(4).toString('hex')}@example.org`;
    const now = Math.floor(Date.now() / 1000);
    const nonce = newNonce();
    const base = { sub: newSub(), email, email_verified: true, nonce: sha256(nonce) };
    const unsigned = (payload: object, header: object) => `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}.`;
    const full = { ...base, aud: CLIENT_ID, iss: apple.issuer, iat: now, exp: now + 600 };
    const hmacWithPublicKey = await new SignJWT(full).setProtectedHeader({ alg: 'HS256', kid: 'own' }).sign(new TextEncoder().encode(JSON.stringify(apple.publicJwk)));
    const refusals = [
      { id_token: await apple.sign({ ...base, aud: 'someone.else' }), nonce },
      { id_token: await apple.sign({ ...base, aud: CLIENT_ID, iat: now - 7200, exp: now - 3600 }), nonce },
      { id_token: await apple.sign({ ...base, aud: CLIENT_ID }), nonce: newNonce() },
      { id_token: await apple.sign({ ...base, aud: CLIENT_ID, nonce }), nonce },
      { id_token: unsigned(full, { alg: 'none' }), nonce },
      { id_token: hmacWithPublicKey, nonce },
      { id_token: await apple.sign({ ...base, aud: CLIENT_ID }, { key: 'stranger' }), nonce },
      { id_token: await apple.sign({ ...base, aud: CLIENT_ID, iss: 'https://appleid.apple.com' }), nonce },
    ];
    for (const body of refusals) expectError(await signIn(body), 401, 2019);
    expect(await countUsers()).toBe(before);
    const details = (await audit(undefined, 'oidc_login_failed')).map((e) => e.detail);
    for (const detail of ['apple:claim_aud', 'apple:expired', 'apple:nonce', 'apple:algorithm', 'apple:unknown_key', 'apple:claim_iss']) expect(details, JSON.stringify(details)).toContain(detail);
  });

  it('takes a nonce once: the same ID token again, or another with its nonce, answers 2019 and creates or links nothing', async () => {
    const email = `${randomBytes(4).toString('hex')}@example.com`;
    const token = await appleToken({ email, email_verified: true });
    const first = await signIn(token);
    expectOk(first);
    const before = await countUsers();
    const sessions = async () => (await call(t.app, 'GET', '/sessions', { token: first.body.data.token })).body.data.length;
    const sessionsBefore = await sessions();
    const replayed = await signIn(token);
    expectError(replayed, 401, 2019);
    expect(replayed.body.message).toMatch(/used already/);
    // Another token of the provider carrying the same nonce (another identity): refused too, no account made.
    const sameNonce = await apple.sign({ aud: CLIENT_ID, sub: newSub(), nonce: sha256(token.nonce), email: `${randomBytes(4).toString('hex')}@example.com`, email_verified: true });
    expectError(await signIn({ id_token: sameNonce, nonce: token.nonce }), 401, 2019);
    expect(await countUsers()).toBe(before);
    expect(await sessions()).toBe(sessionsBefore);
    // Nor can it be linked to another account.
    const other = await registerVerified(t);
    expectError(await call(t.app, 'POST', '/oidc/apple/link/id-token', { token: other.tokens.token, body: token }), 401, 2019);
    expect(await t.database.db.select().from(oidcIdentities).where(eq(oidcIdentities.userId, other.id))).toEqual([]);
    expect((await audit(undefined, 'oidc_login_failed')).filter((e) => e.detail === 'apple:replayed').length).toBeGreaterThanOrEqual(3);
    // A token with a nonce of its own still signs in.
    const sub = JSON.parse(Buffer.from(token.id_token.split('.')[1]!, 'base64url').toString()).sub as string;
    const nonce = newNonce();
    expectOk(await signIn({ id_token: await apple.sign({ aud: CLIENT_ID, sub, nonce: sha256(nonce) }), nonce }));
  });

  it('never merges: a verified e-mail of a password account answers 2020 and changes nothing; an unverified one too, without signing in; after linking (fresh) the provider signs in to it', async () => {
    const user = await registerVerified(t);
    const sub = newSub();
    // Each ID token with a nonce of its own (a nonce is taken once).
    const token = async (claims: object) => {
      const nonce = newNonce();
      return { id_token: await apple.sign({ aud: CLIENT_ID, sub, nonce: sha256(nonce), email: user.email, ...claims }), nonce };
    };
    expectError(await signIn(await token({ email_verified: true })), 409, 2020);
    expectError(await signIn(await token({ email_verified: false })), 409, 2020);
    expect(await t.database.db.select().from(oidcIdentities).where(eq(oidcIdentities.userId, user.id))).toEqual([]);
    const linked = await call<'POST', string, IdentityView>(t.app, 'POST', '/oidc/apple/link/id-token', { token: user.tokens.token, body: await token({ email_verified: true }) });
    expectOk(linked);
    expect(linked.body.data.provider).toBe('apple');
    const signedIn = await signIn(await token({ email_verified: true }));
    expectOk(signedIn);
    expect(signedIn.body.data.user.id).toBe(user.id);
    // Operators see it in the user view.
    const operator = (await (await t.app.request(`/internal/v1/users/${user.id}`, { headers: { 'X-Internal-Token': t.internalToken } })).json()) as { identities: Array<{ provider: string; email: string }> };
    expect(operator.identities.map((i) => [i.provider, i.email])).toEqual([['apple', user.email]]);
    expect((await eventsOf(user.id, 'auth.identity.linked')).map((e) => e.identityId)).toEqual([linked.body.data.id]);
    expect((await audit(user.id, 'identity_linked')).map((e) => e.detail)).toEqual(['oidc:apple']);
    // An identity linked here cannot be linked to another account.
    const other = await registerVerified(t);
    expectError(await call(t.app, 'POST', '/oidc/apple/link/id-token', { token: other.tokens.token, body: await token({}) }), 409, 2022);
    // Listed, and unlinked (the password remains); the owner is mailed for both.
    const list = await call(t.app, 'GET', '/identities', { token: user.tokens.token });
    expect(list.body.data.map((i) => i.provider)).toEqual(['apple']);
    expectOk(await call(t.app, 'DELETE', `/identities/${linked.body.data.id}`, { token: user.tokens.token }));
    expect((await eventsOf(user.id, 'auth.identity.unlinked')).map((e) => e.provider)).toEqual(['apple']);
    await smtp.waitFor((m) => m.to.includes(user.email) && /linked to your account/.test(m.subject));
    await smtp.waitFor((m) => m.to.includes(user.email) && /removed from your account/.test(m.subject));
  });

  it('links only from a fresh session (REAUTH_WINDOW_S): a stale one answers 2017 and links nothing', async () => {
    const user = await registerVerified(t);
    clock.offsetMs += 301_000;
    const body = await appleToken({ email: `${randomBytes(4).toString('hex')}@example.com`, email_verified: true });
    expectError(await call(t.app, 'POST', '/oidc/apple/link/id-token', { token: user.tokens.token, body }), 403, 2017);
    const started = await t.app.request(`/api/v1/auth/oidc/apple/link/start?redirect_uri=${encodeURIComponent('https://app.example.com/signed-in')}`, { method: 'POST', headers: { authorization: `Bearer ${user.tokens.token}` } });
    expect(started.status).toBe(403);
    expect(await t.database.db.select().from(oidcIdentities).where(eq(oidcIdentities.userId, user.id))).toEqual([]);
    // A re-authentication makes it fresh again.
    expectOk(await call(t.app, 'POST', '/reauth', { token: user.tokens.token, body: { password: user.password } }));
    expectOk(await call(t.app, 'POST', '/oidc/apple/link/id-token', { token: user.tokens.token, body }));
  });

  it('a deleted account is gone with its identities: the provider signs in to a new account, never the old one', async () => {
    const email = `${randomBytes(4).toString('hex')}@example.com`;
    const sub = newSub();
    const token = async () => {
      const nonce = newNonce();
      return { id_token: await apple.sign({ aud: CLIENT_ID, sub, nonce: sha256(nonce), email, email_verified: true }), nonce };
    };
    const first = await signIn(await token());
    expectOk(first);
    const oldId = first.body.data.user.id;
    expectOk(await call(t.app, 'POST', '/password/set', { token: first.body.data.token, body: { password: 'a-long-new-password-1' } }));
    expectOk(await call(t.app, 'DELETE', '/account', { token: first.body.data.token, body: { password: 'a-long-new-password-1' } }));
    const again = await signIn(await token());
    expectOk(again);
    expect(again.body.data.user.id).not.toBe(oldId);
  });

  it('refuses to unlink the last way to sign in; after POST /password/set it may', async () => {
    const reply = await signIn(await appleToken({ email: `${randomBytes(4).toString('hex')}@example.com`, email_verified: true }));
    expectOk(reply);
    const token = reply.body.data.token;
    const [identity] = (await call(t.app, 'GET', '/identities', { token })).body.data;
    expectError(await call(t.app, 'DELETE', `/identities/${identity!.id}`, { token }), 409, 2023);
    expectOk(await call(t.app, 'POST', '/password/set', { token, body: { password: 'a-long-new-password-1' } }));
    expectError(await call(t.app, 'POST', '/password/set', { token, body: { password: 'a-long-new-password-2' } }), 409, 1001);
    expectOk(await call(t.app, 'DELETE', `/identities/${identity!.id}`, { token }));
  });

  it('applies a ban and TOTP as a password login does', async () => {
    const reply = await signIn(await appleToken({ email: `${randomBytes(4).toString('hex')}@example.com`, email_verified: true }));
    expectOk(reply);
    const sub = JSON.parse(Buffer.from(reply.body.data.token.split('.')[1]!, 'base64url').toString()).sub as string;
    const [identity] = await t.database.db.select().from(oidcIdentities).where(eq(oidcIdentities.userId, Number(sub)));
    const again = async () => {
      const nonce = newNonce();
      return signIn({ id_token: await apple.sign({ aud: CLIENT_ID, sub: identity!.subject, nonce: sha256(nonce) }), nonce });
    };
    // TOTP on: the sign-in answers 2007 and the login's second step.
    const token = reply.body.data.token;
    const setup = await call(t.app, 'POST', '/mfa/totp/setup', { token });
    expectOk(setup);
    const totp = new TOTP({ secret: Secret.fromBase32(setup.body.data.secret) });
    const enabled = await call(t.app, 'POST', '/mfa/totp/enable', { token, body: { code: totp.generate({ timestamp: Date.now() - 30_000 }) } });
    expectOk(enabled);
    const recoveryCodes = enabled.body.data.recovery_codes;
    const challenged = await again();
    expectError(challenged, 401, 2007);
    const second = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: (challenged.body.data as unknown as { mfa_token: string }).mfa_token, code: totp.generate() } });
    expectOk(second);
    // The session and its audit row (newest first) name the provider and the second step, not the password.
    const current = async (accessToken: string) => (await call(t.app, 'GET', '/sessions', { token: accessToken })).body.data.find((s) => s.current)!.auth_method;
    expect(await current(second.body.data.token)).toBe('oidc:apple+totp');
    // A recovery code as the second step.
    const byRecovery = await again();
    expectError(byRecovery, 401, 2007);
    const third = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: (byRecovery.body.data as unknown as { mfa_token: string }).mfa_token, recovery_code: recoveryCodes[0] } });
    expectOk(third);
    expect(await current(third.body.data.token)).toBe('oidc:apple+recovery_code');
    expect((await audit(identity!.userId, 'login_succeeded')).map((e) => e.detail)).toEqual(['oidc:apple+recovery_code', 'oidc:apple+totp', 'oidc:apple']);
    // Banned: 2006, as after a right password.
    const ban = await t.app.request(`/internal/v1/users/${identity!.userId}/ban`, { method: 'POST', headers: { 'X-Internal-Token': t.internalToken, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'test' }) });
    expect(ban.status).toBe(200);
    expectError(await again(), 403, 2006);
  });

  it('answers 1004 for a provider not configured and 2021 for one whose discovery fails, while the rest runs', async () => {
    expectError(await call(t.app, 'POST', '/oidc/nope/id-token', { body: { id_token: 'a.b.c', nonce: 'n' } }), 404, 1004);
    expectError(await call(t.app, 'POST', '/oidc/acme/id-token', { body: { id_token: 'a.b.c', nonce: 'n' } }), 503, 2021);
    expectOk(await signIn(await appleToken({ email: `${randomBytes(4).toString('hex')}@example.com`, email_verified: true })));
  });

  it('lists the configured providers publicly: names and labels only, in OIDC_PROVIDERS order', async () => {
    const res = await t.app.request('/api/v1/auth/oidc/providers');
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ code: 0, message: 'ok', data: [{ name: 'apple', label: 'Apple' }, { name: 'acme', label: 'Acme SSO' }] });
    // Nothing of the configuration beyond them: no issuer, client id, key.
    for (const secret of [apple.issuer, CLIENT_ID, 'TEAM123456', 'KEY1234567', 'http://127.0.0.1:9']) expect(text).not.toContain(secret);
  });

  it("asks Apple's web flow for form_post, with a flow cookie the provider's cross-site POST carries (SameSite=None, Secure)", async () => {
    const res = await t.app.request(`/api/v1/auth/oidc/apple/start?redirect_uri=${encodeURIComponent('https://app.example.com/signed-in')}`);
    expect(res.status).toBe(302);
    const authorize = new URL(res.headers.get('location')!);
    expect(authorize.searchParams.get('response_mode')).toBe('form_post');
    expect(authorize.searchParams.get('redirect_uri')).toBe('https://chat.example.com/api/v1/auth/oidc/apple/callback');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('oidc_flow='))!;
    expect(cookie).toMatch(/; SameSite=None/i);
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; Path=\/api\/v1\/auth\/oidc\/apple\/callback/);
  });

  it('refuses a redirect_uri not in OIDC_REDIRECT_URIS', async () => {
    const res = await t.app.request('/api/v1/auth/oidc/apple/start?redirect_uri=https%3A%2F%2Fevil.example%2F');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: number }).code).toBe(1001);
  });
});
