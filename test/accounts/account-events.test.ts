// Account events on the process's one bus: every way a session ends (logout, revoke, password change,
// reset, reuse, deletion, ban, e-mail change) makes introspection answer active: false at once, and its auth.* event
// reaches the event stream (?types=auth.*) and a real webhook receiver within 1 s with the right reason.
// A stream filtered only by routerId does not get them. Real database, real HTTP, a real SMTP server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { verifyWebhook } from '../../src/client/index.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { openStream, serveApp, type AppServer, type SseReader } from '../events/support.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, registerVerified, type Registered } from './helpers.js';

const SECRET = 'account-events-webhook-secret-0123456789';
const WITHIN_MS = 1000;

let t: TestApp;
let smtp: TestSmtp;
let server: AppServer;
let hook: Server;
const delivered: Array<Record<string, unknown> & { receivedAt: number }> = [];
let stream: SseReader;
let routerStream: SseReader;
const aborts: AbortController[] = [];
let offsetMs = 0;

beforeAll(async () => {
  hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const batch = verifyWebhook(Buffer.concat(chunks).toString('utf8'), req.headers, SECRET);
      const receivedAt = Date.now();
      for (const event of batch.events) delivered.push({ ...(event as unknown as Record<string, unknown>), receivedAt });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  smtp = await startTestSmtp();
  t = await buildTestApp(
    {
      SMTP_URL: smtp.url,
      EVENTS_WEBHOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
      EVENTS_WEBHOOK_SECRET: SECRET,
      EVENTS_HEARTBEAT_S: '1',
      ACCESS_TOKEN_TTL: '600',
    },
    { now: () => new Date(Date.now() + offsetMs) },
  );
  server = await serveApp(t);
  const open = async (query: string) => {
    const abort = new AbortController();
    aborts.push(abort);
    const { response, reader } = await openStream(server.url, { query, token: t.internalToken, signal: abort.signal });
    expect(response.status).toBe(200);
    return reader!;
  };
  stream = await open('?types=auth.*');
  routerStream = await open('?routerId=00000000-0000-4000-8000-000000000000');
}, APP_TIMEOUT);

afterAll(async () => {
  for (const abort of aborts) abort.abort();
  await server?.close();
  await t?.close();
  await smtp?.close();
  await new Promise((resolve) => hook?.close(resolve));
}, APP_TIMEOUT);

async function inactive(token: string): Promise<boolean> {
  const res = await t.app.request('/internal/v1/auth/introspect', {
    method: 'POST',
    headers: { 'X-Internal-Token': t.internalToken, 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return ((await res.json()) as { active: boolean }).active === false;
}

/** The event of `type` for `userId` (and `reason`) on the stream and at the webhook, each within WITHIN_MS of `since`. */
async function arrives(since: number, match: Record<string, unknown>): Promise<void> {
  const matches = (e: Record<string, unknown>) => Object.entries(match).every(([k, v]) => e[k] === v);
  await stream.until(() => stream.events().some(matches), WITHIN_MS * 3, `${JSON.stringify(match)} on the stream`);
  const onStream = stream.frames.find((f) => matches(JSON.parse(f.data) as Record<string, unknown>))!;
  expect(onStream.event).toBe(match.type);
  const deadline = since + WITHIN_MS * 3;
  while (!delivered.some(matches) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const atHook = delivered.find(matches);
  expect(atHook, `${JSON.stringify(match)} at the webhook`).toBeDefined();
  expect(atHook!.receivedAt - since, 'webhook delivery time').toBeLessThan(WITHIN_MS);
}

function sid(user: Registered | { tokens: { token: string } }): string {
  return (JSON.parse(Buffer.from(user.tokens.token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
}

describe('each way a session ends', () => {
  it('logout', async () => {
    const user = await register(t.app);
    const since = Date.now();
    expectOk(await call(t.app, 'POST', '/logout', { token: user.tokens.token }));
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'logout' });
  });

  it('a session revoked from another device', async () => {
    const user = await register(t.app);
    const other = (await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } })).body.data;
    const since = Date.now();
    expectOk(await call(t.app, 'DELETE', `/sessions/${sid(user)}`, { token: other.token }));
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'revoked' });
  });

  it('password change (the other sessions)', async () => {
    const user = await register(t.app);
    const other = (await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } })).body.data;
    const since = Date.now();
    expectOk(await call(t.app, 'PUT', '/password', { token: other.token, body: { old_password: user.password, new_password: 'Changed-secret-42' } }));
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'password_changed' });
  });

  it('password reset', async () => {
    const user = await register(t.app);
    expectOk(await call(t.app, 'POST', '/password/forgot', { body: { email: user.email } }));
    const code = codeOf(await smtp.waitFor((m) => m.to.includes(user.email) && m.subject.includes('reset code')));
    const since = Date.now();
    expectOk(await call(t.app, 'POST', '/password/reset', { body: { email: user.email, code, new_password: 'Reset-secret-42' } }));
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'password_reset' });
  });

  it('e-mail change (the other sessions; issue 31)', async () => {
    const user = await register(t.app);
    const other = (await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } })).body.data;
    const newEmail = `moved_${user.username}@example.org`;
    expectOk(await call(t.app, 'PUT', '/email', { token: other.token, body: { new_email: newEmail, password: user.password } }));
    const code = codeOf(await smtp.waitFor((m) => m.to.includes(newEmail) && m.subject === 'Confirm your new e-mail address'));
    const since = Date.now();
    expectOk(await call(t.app, 'POST', '/email/confirm', { token: other.token, body: { code } }));
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'email_changed' });
  });

  it('refresh token reuse', async () => {
    const user = await register(t.app);
    const rotated = (await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: user.tokens.refresh_token } })).body.data;
    offsetMs = 60_000; // past REFRESH_REUSE_GRACE_S
    try {
      const since = Date.now();
      expectError(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: user.tokens.refresh_token } }), 401, 1002);
      expect(await inactive(rotated.token)).toBe(true);
      await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'reuse_detected' });
    } finally {
      offsetMs = 0;
    }
  });

  it('account deletion', async () => {
    const user = await register(t.app);
    const since = Date.now();
    expectOk(await call(t.app, 'DELETE', '/account', { token: user.tokens.token, body: { password: user.password } }));
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'account_deleted' });
    await arrives(since, { type: 'auth.user.deleted', userId: user.id });
  });

  it('ban and unban', async () => {
    const user = await register(t.app);
    const since = Date.now();
    const res = await t.app.request(`/internal/v1/users/${user.id}/ban`, {
      method: 'POST',
      headers: { 'X-Internal-Token': t.internalToken, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'spam' }),
    });
    expect(res.status).toBe(200);
    expect(await inactive(user.tokens.token)).toBe(true);
    await arrives(since, { type: 'auth.session.ended', userId: user.id, sessionId: sid(user), reason: 'banned' });
    await arrives(since, { type: 'auth.user.banned', userId: user.id, until: null, reason: 'spam' });
    const lifted = Date.now();
    expect((await t.app.request(`/internal/v1/users/${user.id}/ban`, { method: 'DELETE', headers: { 'X-Internal-Token': t.internalToken } })).status).toBe(200);
    await arrives(lifted, { type: 'auth.user.unbanned', userId: user.id });
  });
});

describe('an operator clears the second factors', () => {
  it('DELETE /internal/v1/users/:id/mfa removes TOTP and its recovery codes, publishes auth.user.mfa_cleared, audits and mails the owner; 404 for an unknown user', async () => {
    const user = await registerVerified(t);
    const setup = await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
    expectOk(setup);
    const totp = new TOTP({ secret: Secret.fromBase32(setup.body.data.secret) });
    expectOk(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: totp.generate() } }));
    expect((await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } })).body.code).toBe(2007);

    const since = Date.now();
    const clear = (id: number) => t.app.request(`/internal/v1/users/${id}/mfa`, { method: 'DELETE', headers: { 'X-Internal-Token': t.internalToken } });
    const res = await clear(user.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user_id: user.id, passkeys_removed: 0, totp_removed: true });
    await arrives(since, { type: 'auth.user.mfa_cleared', userId: user.id, passkeys: 0, totp: true });
    // The password alone signs in again; the sessions stayed.
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }));
    expectOk(await call(t.app, 'GET', '/profile', { token: user.tokens.token }));
    const mail = await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'Your two-factor sign-in and passkeys were removed');
    expect(mail.text).toContain('An operator removed');
    const audit = await t.app.request(`/internal/v1/auth-events?userId=${user.id}&type=mfa_cleared`, { headers: { 'X-Internal-Token': t.internalToken } });
    expect(((await audit.json()) as { events: Array<{ detail: string }> }).events.map((e) => e.detail)).toEqual(['operator: 0 passkeys, totp removed']);

    const unknown = await clear(2_000_000_000);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('NOT_FOUND');
    expect((await t.app.request(`/internal/v1/users/${user.id}/mfa`, { method: 'DELETE' })).status).toBe(401);
  });
});

describe('filters', () => {
  it('a stream filtered only by routerId gets no account event; the types filter is checked', async () => {
    await stream.until(() => stream.events().some((e) => e.type === 'auth.user.unbanned'), 5000, 'the last event');
    expect(routerStream.events().filter((e) => String(e.type).startsWith('auth.'))).toEqual([]);
    expect(stream.events().every((e) => String(e.type).startsWith('auth.'))).toBe(true);
    for (const query of ['?types=', '?types=auth.', '?types=AUTH.*', `?types=${'a'.repeat(70)}`]) {
      const { response } = await openStream(server.url, { query, token: t.internalToken });
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
    }
  });
});
