// Sign-in with OpenID Connect providers, web flow, against two real OpenID Providers (oidc-provider
// on loopback: one standing in for Google, one generic) with real clients, keys and consent: start
// (PKCE S256, state in a cookie, nonce), the provider's login and consent, the callback (state, the
// RFC 9207 iss parameter, the code exchange, the ID token), the one-time code and its exchange; the
// refusals (wrong state, replayed callback, wrong iss, replayed code, a cookie of another browser);
// linking a second provider through the same flow. Real database (PGlite; PostgreSQL in `postgres`).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, useMailingApp, type Reply } from './helpers.js';

const RETURN = 'https://app.example.com/signed-in';
const ISSUER = 'http://localhost:3000';
const env: Record<string, string> = {};
let google: TestProvider;
let acme: TestProvider;
/** Apple's web flow as oidc-provider gives it: the answer posted as a form (response_mode=form_post, apple's default). */
let apple: TestProvider;
beforeAll(async () => {
  google = await startTestProvider({ clientId: 'chat-google', callbackUrl: `${ISSUER}/api/v1/auth/oidc/google/callback` });
  acme = await startTestProvider({ clientId: 'chat-acme', callbackUrl: `${ISSUER}/api/v1/auth/oidc/acme/callback` });
  apple = await startTestProvider({ clientId: 'chat-apple', callbackUrl: `${ISSUER}/api/v1/auth/oidc/apple/callback` });
  Object.assign(env, {
    AUTH_ISSUER: ISSUER,
    OIDC_PROVIDERS: 'google,acme,apple',
    OIDC_GOOGLE_ISSUER: google.issuer,
    OIDC_GOOGLE_CLIENT_ID: google.clientId,
    OIDC_GOOGLE_CLIENT_SECRET: google.clientSecret,
    OIDC_ACME_ISSUER: acme.issuer,
    OIDC_ACME_CLIENT_ID: acme.clientId,
    OIDC_ACME_CLIENT_SECRET: acme.clientSecret,
    OIDC_APPLE_ISSUER: apple.issuer,
    OIDC_APPLE_CLIENT_ID: apple.clientId,
    OIDC_APPLE_CLIENT_SECRET: apple.clientSecret,
    OIDC_REDIRECT_URIS: RETURN,
  });
}, APP_TIMEOUT);
afterAll(async () => {
  await google?.close();
  await acme?.close();
  await apple?.close();
});
const { t } = useMailingApp(env);

/** A browser's trip: start (its cookie kept), the provider, back at our callback's URL. */
async function toCallback(provider: TestProvider, name: string, start?: () => Promise<Response>) {
  const res = start ? await start() : await t.app.request(`/api/v1/auth/oidc/${name}/start?redirect_uri=${encodeURIComponent(RETURN)}`);
  expect(res.status).toBe(302);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('oidc_flow='))!.split(';')[0]!;
  const authorize = new URL(res.headers.get('location')!);
  expect(authorize.origin).toBe(provider.issuer);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('nonce')).toBeTruthy();
  const callback = new URL(await provider.browse(authorize.href));
  expect(callback.href.startsWith(`${ISSUER}/api/v1/auth/oidc/${name}/callback`)).toBe(true);
  expect(callback.searchParams.get('iss')).toBe(provider.issuer);
  return { callback, cookie };
}

const back = async (callback: URL, cookie: string | undefined): Promise<Response> => t.app.request(`${callback.pathname}${callback.search}`, { headers: cookie ? { cookie } : {} });
/** An answer in the envelope, as expectError reads it. */
const json = async (r: Response): Promise<Reply> => ({ status: r.status, headers: r.headers, body: (await r.json()) as Reply['body'] });

describe('the web flow against a real OpenID Provider', () => {
  it('signs in: start → provider → callback → redirect_uri?code= → exchange; the code works once', async () => {
    const email = `${randomBytes(4).toString('hex')}@gmail.example`;
    google.account = { sub: `g-${randomBytes(6).toString('hex')}`, email, email_verified: true, name: 'Ada Lovelace' };
    const { callback, cookie } = await toCallback(google, 'google');
    const res = await back(callback, cookie);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(RETURN);
    const code = to.searchParams.get('code')!;
    expect(code, to.href).toBeTruthy();
    expect(to.search).not.toMatch(/token/);
    const signedIn = await call(t.app, 'POST', '/oidc/exchange', { body: { code } });
    expectOk(signedIn);
    expect(signedIn.body.data.user.email).toBe(email);
    expect(signedIn.body.data.user.nickname).toBe('Ada Lovelace');
    expectError(await call(t.app, 'POST', '/oidc/exchange', { body: { code } }), 401, 2019);
    // The replayed callback finds its flow used.
    expectError(await json(await back(callback, cookie)), 401, 2019);
  });

  it('refuses a wrong state, a callback without the browser\'s cookie, and a wrong iss parameter', async () => {
    google.account = { sub: `g-${randomBytes(6).toString('hex')}`, email: `${randomBytes(4).toString('hex')}@gmail.example`, email_verified: true };
    const { callback, cookie } = await toCallback(google, 'google');
    const wrongState = new URL(callback);
    wrongState.searchParams.set('state', 'x'.repeat(43));
    expectError(await json(await back(wrongState, cookie)), 401, 2019);
    expectError(await json(await back(callback, undefined)), 401, 2019);
    const wrongIss = new URL(callback);
    wrongIss.searchParams.set('iss', acme.issuer);
    const res = await back(wrongIss, cookie);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(to.searchParams.get('error_code')).toBe('2019');
    expect(to.searchParams.get('code')).toBeNull();
  });

  it('links a second provider to the signed-in account (fresh session), which then signs in to it', async () => {
    const user = await register(t.app);
    acme.account = { sub: `a-${randomBytes(6).toString('hex')}`, email: user.email, email_verified: true };
    const started = await t.app.request(`/api/v1/auth/oidc/acme/link/start?redirect_uri=${encodeURIComponent(RETURN)}`, { method: 'POST', headers: { authorization: `Bearer ${user.tokens.token}` } });
    const { callback, cookie } = await toCallback(acme, 'acme', () => Promise.resolve(started));
    const res = await back(callback, cookie);
    expect(new URL(res.headers.get('location')!).searchParams.get('linked')).toBe('acme');
    const identities = await call(t.app, 'GET', '/identities', { token: user.tokens.token });
    expect(identities.body.data.map((i) => i.provider)).toEqual(['acme']);
    // Now the provider signs in to that account (its e-mail matched, but the identity is linked).
    const again = await toCallback(acme, 'acme');
    const signed = new URL((await back(again.callback, again.cookie)).headers.get('location')!);
    const session = await call(t.app, 'POST', '/oidc/exchange', { body: { code: signed.searchParams.get('code') } });
    expectOk(session);
    expect(session.body.data.user.id).toBe(user.id);
  });

  it('does not link when the session that started the link has ended meanwhile', async () => {
    const user = await register(t.app);
    acme.account = { sub: `a-${randomBytes(6).toString('hex')}`, email: `${randomBytes(4).toString('hex')}@example.com`, email_verified: true };
    const started = await t.app.request(`/api/v1/auth/oidc/acme/link/start?redirect_uri=${encodeURIComponent(RETURN)}`, { method: 'POST', headers: { authorization: `Bearer ${user.tokens.token}`, accept: 'application/json' } });
    const { url } = ((await started.clone().json()) as { data: { url: string } }).data;
    const { callback, cookie } = await toCallback(acme, 'acme', () => Promise.resolve(new Response(null, { status: 302, headers: { location: url, 'set-cookie': started.headers.getSetCookie()[0]! } })));
    expectOk(await call(t.app, 'POST', '/logout', { token: user.tokens.token }));
    const to = new URL((await back(callback, cookie)).headers.get('location')!);
    expect(to.searchParams.get('error_code')).toBe('2019');
    expect(to.searchParams.get('linked')).toBeNull();
  });

  it("takes the answer the provider posts as a form (response_mode=form_post, Apple's) with the same checks: state, the browser's cookie, single use", async () => {
    const email = `${randomBytes(4).toString('hex')}@icloud.example`;
    apple.account = { sub: `ap-${randomBytes(6).toString('hex')}`, email, email_verified: true, name: 'Grace Hopper' };
    const res = await t.app.request(`/api/v1/auth/oidc/apple/start?redirect_uri=${encodeURIComponent(RETURN)}`);
    expect(res.status).toBe(302);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('oidc_flow='))!.split(';')[0]!;
    const authorize = new URL(res.headers.get('location')!);
    expect(authorize.searchParams.get('response_mode')).toBe('form_post');
    // The form the provider's page posts (its script submits it in a browser).
    const { action, fields } = await apple.browseToForm(authorize.href);
    expect(action).toBe(`${ISSUER}/api/v1/auth/oidc/apple/callback`);
    expect(fields.get('code')).toBeTruthy();
    expect(fields.get('iss')).toBe(apple.issuer);
    const post = (body: URLSearchParams | string, headers: Record<string, string>) =>
      t.app.request('/api/v1/auth/oidc/apple/callback', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: body.toString() });
    const wrongState = new URLSearchParams(fields);
    wrongState.set('state', 'x'.repeat(43));
    expectError(await json(await post(wrongState, { cookie })), 401, 2019);
    expectError(await json(await post(fields, {})), 401, 2019);
    // Not a form: refused before anything is checked.
    expectError(await json(await post(JSON.stringify(Object.fromEntries(fields)), { cookie, 'content-type': 'application/json' })), 400, 1001);
    const answered = await post(fields, { cookie });
    expect(answered.status).toBe(302);
    const to = new URL(answered.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(RETURN);
    const signedIn = await call(t.app, 'POST', '/oidc/exchange', { body: { code: to.searchParams.get('code') } });
    expectOk(signedIn);
    expect(signedIn.body.data.user.email).toBe(email);
    // The same form again finds its flow used.
    expectError(await json(await post(fields, { cookie })), 401, 2019);
  });
});
