// Passkeys in real Chromium (issue 31): Debian's Chromium through playwright-core, with DevTools'
// virtual authenticator (WebAuthn.addVirtualAuthenticator: CTAP2, internal, resident keys, user
// verified) creating and using the credentials of pages served on http://localhost. The browser does
// the ceremonies (test/browser/passkeys-page.ts: the browser's own WebAuthn JSON helpers); the
// account API is this test's app. Register, log out, sign in without a username; a cloned credential
// with a stale counter, a reused challenge and an origin outside WEBAUTHN_ORIGINS are refused. And the
// browser demo's "Add a passkey" and "Sign in with a passkey" buttons.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser } from '../../examples/browser-demo/start.js';
import { call, expectError, expectOk, registerVerified, type Registered } from '../accounts/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { launchChromium, type LaunchedChromium } from '../support/browser.js';
import { useDemoInChromium, verifyDemoEmail } from '../support/demo.js';
import { CHROMIUM_BROWSER, skipWithout } from '../support/system-programs.js';

const PAGE_SCRIPT = new URL('../browser/passkeys-page.ts', import.meta.url).pathname;

/** The ceremonies of test/browser/passkeys-page.ts, as the page exposes them. */
type PageWindow = {
  passkeys: { create(options: unknown): Promise<unknown>; get(options: unknown): Promise<{ id: string; response: { userHandle?: string } }> };
};

/** The page on http://localhost:<port> of its own (an origin WebAuthn accepts over plain http), with its script. */
async function pageServer(script: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/passkeys.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><meta charset="utf-8"><title>passkeys</title><script type="module" src="/passkeys.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
}

interface VirtualAuthenticator {
  page: Page;
  cdp: CDPSession;
  id: string;
}

/** A page of `origin` with a virtual authenticator of its own. */
async function authenticatorPage(browser: LaunchedChromium, origin: string): Promise<VirtualAuthenticator> {
  const page = await browser.context.newPage();
  await page.goto(origin);
  await page.waitForFunction(() => 'passkeys' in globalThis);
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { page, cdp, id: authenticatorId };
}

/** navigator.credentials.create() with the server's options, answered as JSON. */
function create(page: Page, options: unknown): Promise<unknown> {
  return page.evaluate((json) => (globalThis as unknown as PageWindow).passkeys.create(json), options);
}

/** navigator.credentials.get() with the server's options (no allowCredentials: the authenticator picks). */
function get(page: Page, options: unknown): Promise<{ id: string; response: { userHandle?: string } }> {
  return page.evaluate((json) => (globalThis as unknown as PageWindow).passkeys.get(json), options);
}

describe.skipIf(skipWithout(CHROMIUM_BROWSER))('passkeys in Chromium (virtual authenticator)', () => {
  let t: TestApp;
  let browser: LaunchedChromium;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  let user: Registered;
  let first: VirtualAuthenticator;

  beforeAll(async () => {
    const script = await bundleForBrowser(PAGE_SCRIPT);
    [allowed, other] = await Promise.all([pageServer(script), pageServer(script)]);
    t = await buildTestApp({ WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: allowed.origin }, { areas: { relay: false } });
    browser = await launchChromium();
    first = await authenticatorPage(browser, allowed.origin);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    allowed?.server.close();
    other?.server.close();
  }, 60_000);

  const loginOptions = async () => (await call(t.app, 'POST', '/passkeys/login/options')).body.data;
  const signIn = (response: unknown) => call(t.app, 'POST', '/passkeys/login/verify', { body: { response } });
  const failures = async () => {
    const res = await t.app.request(`/internal/v1/auth-events?userId=${user.id}&type=passkey_login_failed`, { headers: { 'X-Internal-Token': t.internalToken } });
    // Oldest first (the trail answers newest first).
    return ((await res.json()) as { events: Array<{ detail: string }> }).events.map((e) => e.detail).reverse();
  };

  it('registers a passkey, logs out, and signs in with it without a username', { timeout: 60_000 }, async () => {
    user = await registerVerified(t);
    const options = await call(t.app, 'POST', '/passkeys/register/options', { token: user.tokens.token });
    expectOk(options);
    const added = await call(t.app, 'POST', '/passkeys/register/verify', { token: user.tokens.token, body: { response: await create(first.page, options.body.data), name: 'Chromium' } });
    expectOk(added);
    const { credentials } = await first.cdp.send('WebAuthn.getCredentials', { authenticatorId: first.id });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost', userName: user.username });

    expectOk(await call(t.app, 'POST', '/logout', { token: user.tokens.token }));
    expectError(await call(t.app, 'GET', '/passkeys', { token: user.tokens.token }), 401, 1002);

    const assertion = await get(first.page, await loginOptions());
    // DevTools spells ids in base64, WebAuthn's JSON in base64url.
    expect(assertion.id).toBe(Buffer.from(credentials[0]!.credentialId, 'base64').toString('base64url'));
    const signedIn = await signIn(assertion);
    expectOk(signedIn);
    expect(signedIn.body.data.user.id).toBe(user.id);
    const sessions = await call(t.app, 'GET', '/sessions', { token: signedIn.body.data.token });
    expect(sessions.body.data).toEqual([expect.objectContaining({ current: true, auth_method: 'passkey' })]);
    const listed = await call(t.app, 'GET', '/passkeys', { token: signedIn.body.data.token });
    expect(listed.body.data).toEqual([{ id: added.body.data.id, name: 'Chromium', created_at: expect.any(String), last_used_at: expect.any(String) }]);
  });

  it('refuses a challenge used twice, and a captured assertion replayed', { timeout: 60_000 }, async () => {
    const options = await loginOptions();
    const once = await get(first.page, options);
    expectOk(await signIn(once));
    expectError(await signIn(once), 401, 2014);
    // A fresh assertion over the same (used) challenge.
    expectError(await signIn(await get(first.page, options)), 401, 2014);
    expect(await failures()).toEqual(['invalid_assertion', 'invalid_assertion']);
    // The genuine authenticator goes on signing in.
    expectOk(await signIn(await get(first.page, await loginOptions())));
  });

  it('refuses a cloned credential whose counter is behind the stored one', { timeout: 60_000 }, async () => {
    const [original] = (await first.cdp.send('WebAuthn.getCredentials', { authenticatorId: first.id })).credentials;
    expect(original!.signCount).toBeGreaterThan(1);
    // The same key on a second authenticator, as a copied authenticator would hold it, counting from 0.
    const clone = await authenticatorPage(browser, allowed.origin);
    await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.id, credential: { ...original!, signCount: 0 } });
    const before = await failures();
    expectError(await signIn(await get(clone.page, await loginOptions())), 401, 2014);
    expect(await failures()).toEqual([...before, 'stale_counter']);
    // Ahead of the stored counter, the same key is indistinguishable from the original: accepted.
    await clone.cdp.send('WebAuthn.clearCredentials', { authenticatorId: clone.id });
    await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.id, credential: { ...original!, signCount: original!.signCount + 100 } });
    expectOk(await signIn(await get(clone.page, await loginOptions())));
    // ...after which the original, now behind, is the one refused.
    expectError(await signIn(await get(first.page, await loginOptions())), 401, 2014);
    expect((await failures()).at(-1)).toBe('stale_counter');
    await clone.page.close();
  });

  it('refuses a page whose origin is not in WEBAUTHN_ORIGINS', { timeout: 60_000 }, async () => {
    const elsewhere = await authenticatorPage(browser, other.origin);
    // Registering there: the browser makes the credential (the RP ID localhost fits), the service refuses it.
    const session = await registerVerified(t);
    const options = await call(t.app, 'POST', '/passkeys/register/options', { token: session.tokens.token });
    const created = await create(elsewhere.page, options.body.data);
    expectError(await call(t.app, 'POST', '/passkeys/register/verify', { token: session.tokens.token, body: { response: created } }), 400, 2014);
    expect((await call(t.app, 'GET', '/passkeys', { token: session.tokens.token })).body.data).toEqual([]);
    // Signing in there with the real user's key (counter well ahead, so only the origin is wrong).
    const [original] = (await first.cdp.send('WebAuthn.getCredentials', { authenticatorId: first.id })).credentials;
    await elsewhere.cdp.send('WebAuthn.clearCredentials', { authenticatorId: elsewhere.id });
    await elsewhere.cdp.send('WebAuthn.addCredential', { authenticatorId: elsewhere.id, credential: { ...original!, signCount: original!.signCount + 10_000 } });
    const before = await failures();
    expectError(await signIn(await get(elsewhere.page, await loginOptions())), 401, 2014);
    expect(await failures()).toEqual([...before, 'invalid_assertion']);
    await elsewhere.page.close();
  });
});

describe.skipIf(skipWithout(CHROMIUM_BROWSER))('the browser demo: add a passkey, sign in with it', () => {
  const session = useDemoInChromium(30_000);

  it('registers, adds a passkey, and after a reload signs in with it', { timeout: 90_000 }, async () => {
    const demo = await session.start({ readyTimeoutMs: 60_000 });
    const browser = await session.launch();
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(demo.passkeyUrl);
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    const status = page.locator('#status');
    const username = `pk_${Date.now().toString(36)}`;
    await page.fill('input[name=username]', username);
    await page.fill('input[name=password]', 'correct horse');
    await page.click('#register');
    await page.locator('#passkeys:not(.hidden)').waitFor({ timeout: 15_000 });
    // Adding a passkey needs a verified address.
    await verifyDemoEmail(page, demo, username);
    await page.click('#passkey-add');
    await page.locator('#passkeys-list tr').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('#passkeys-list tr td').first().textContent()).toBe('Passkey 1');
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);

    // A fresh page: logged out; the passkey signs in with no username typed.
    await page.reload();
    await page.click('#passkey-login');
    await page.waitForFunction(() => (globalThis as unknown as { demo: { phase: string } }).demo.phase !== 'logged-out', null, { timeout: 15_000 });
    expect(await status.textContent(), errors.join('; ')).toBe(`Signed in with a passkey as ${username}. Join to start.`);
    await page.locator('#passkeys-list tr td', { hasText: 'Passkey 1' }).waitFor({ timeout: 15_000 });
  });
});
