// Two-factor sign-in (issue 31): TOTP set up, enabled and disabled; the login's second step with a
// TOTP or a recovery code; codes accepted once, the challenge single use, 5 minutes, 5 tries; wrong
// codes in the per-account failure budget. A moved clock (the app's `now`), a real SMTP server, the
// real database (PGlite; PostgreSQL too when TEST_DATABASE_URL is set).
import { eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mfaChallenges, recoveryCodes, totpFactors } from '../../src/db/schema.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { late } from '../support/late.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { APP_TIMEOUT, call, expectError, expectOk, registerVerified, type Registered } from './helpers.js';

const STEP_MS = 30_000;

/**
 * The app's clock stands still where a test puts it (a loaded machine cannot carry a test over a step
 * boundary); each test starts in the middle of a 30-second step.
 */
const clock = { at: 0 };
const app = late<TestApp>('the test app');
const mail = late<TestSmtp>('the test SMTP server');
const t = app.value;
const smtp = mail.value;
beforeAll(async () => {
  mail.set(await startTestSmtp());
  app.set(
    await buildTestApp(
      { SMTP_URL: mail.value.url, LOGIN_FAILURES_PER_ACCOUNT: '8', LOGIN_FAILURE_WINDOW_S: '900' },
      { now: () => new Date(clock.at), areas: { relay: false } },
    ),
  );
}, APP_TIMEOUT);
beforeEach(() => {
  midStep();
});
afterAll(async () => {
  await app.get()?.close();
  await mail.get()?.close();
}, APP_TIMEOUT);

/** Puts the app's clock in the middle of a 30-second step, never back from where the last test left it. */
function midStep(): void {
  clock.at = Math.max(Math.ceil(Date.now() / STEP_MS) * STEP_MS + STEP_MS / 2, clock.at + STEP_MS);
}

function appNow(): number {
  return clock.at;
}

interface Enrolled extends Registered {
  totp: TOTP;
  recoveryCodes: string[];
}

function codeAt(totp: TOTP, timestamp: number): string {
  return totp.generate({ timestamp });
}

/** A user with TOTP enabled (by a code of the previous step; then the clock moves a step on, so the current and previous steps are unused). */
async function enrolled(): Promise<Enrolled> {
  const user = await registerVerified(t);
  const setup = await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
  expectOk(setup);
  const totp = new TOTP({ secret: Secret.fromBase32(setup.body.data.secret), algorithm: 'SHA1', digits: 6, period: 30 });
  const now = appNow();
  const enable = await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: codeAt(totp, now - STEP_MS) } });
  expectOk(enable);
  clock.at += STEP_MS;
  return { ...user, totp, recoveryCodes: enable.body.data.recovery_codes };
}

async function challenge(user: Registered): Promise<string> {
  const reply = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
  expectError(reply, 401, 2007);
  const data = reply.body.data as unknown as { mfa_token: string; methods: string[] };
  expect(data.methods).toEqual(['totp', 'recovery_code']);
  return data.mfa_token;
}

async function authEvents(userId: number): Promise<Array<{ type: string; detail: string | null }>> {
  const res = await t.app.request(`/internal/v1/auth-events?userId=${userId}&limit=200`, { headers: { 'X-Internal-Token': t.internalToken } });
  return ((await res.json()) as { events: Array<{ type: string; detail: string | null }> }).events;
}

describe('TOTP set-up', () => {
  it('answers a secret and its otpauth URL, keeps the secret only sealed, and enables with a code of it', async () => {
    const user = await registerVerified(t);
    const setup = await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
    expectOk(setup);
    const { secret, otpauth_url } = setup.body.data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits, base32
    const url = new URL(otpauth_url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe(`/chat-backend:${user.username}`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ issuer: 'chat-backend', secret, algorithm: 'SHA1', digits: '6', period: '30' });
    const [row] = await t.database.db.select().from(totpFactors).where(eq(totpFactors.userId, user.id));
    expect(row!.enabledAt).toBeNull();
    expect(row!.secret).toMatch(/^v1\./);
    expect(row!.secret).not.toContain(secret);

    // A pending factor changes nothing at login.
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }));

    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    const now = appNow();
    expectError(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: codeAt(totp, now - 2 * STEP_MS) } }), 403, 2013);
    expectError(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: '12345' } }), 400, 1001);
    const enable = await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: codeAt(totp, now) } });
    expectOk(enable);
    const codes = enable.body.data.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
    // Stored only as digests.
    const stored = await t.database.db.select().from(recoveryCodes).where(eq(recoveryCodes.userId, user.id));
    expect(stored).toHaveLength(10);
    for (const code of codes) expect(JSON.stringify(stored)).not.toContain(code.replace('-', ''));

    expectError(await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token }), 409, 2011);
    expectError(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: codeAt(totp, now) } }), 409, 2011);
    expect((await authEvents(user.id)).map((e) => e.type)).toContain('totp_enabled');
    const mail = await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'Two-factor sign-in was turned on');
    expect(mail.text).not.toContain(secret);
  });

  it('refuses to enable without a pending secret', async () => {
    const user = await registerVerified(t);
    expectError(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: '123456' } }), 409, 2011);
    expectError(await call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password: user.password, code: '123456' } }), 409, 2011);
  });
});

describe('login with a second factor', () => {
  it('accepts the current and the previous step, refuses older and next steps and a code reused in its step', async () => {
    const user = await enrolled();
    const now = appNow();
    // The previous step (the step of enabling was two back, so it is later than that).
    const first = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: await challenge(user), code: codeAt(user.totp, now - STEP_MS) } });
    expectOk(first);
    expect(first.body.data.user.id).toBe(user.id);
    // The current step.
    const second = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: await challenge(user), code: codeAt(user.totp, now) } });
    expectOk(second);
    const sessions = await call(t.app, 'GET', '/sessions', { token: second.body.data.token });
    expect(sessions.body.data.find((s) => s.current)!.auth_method).toBe('password+totp');

    // Reused in its step: refused, though the challenge is fresh.
    const token = await challenge(user);
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, now) } }), 401, 2013);
    // Two steps back, and the next step: refused.
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, now - 2 * STEP_MS) } }), 401, 2013);
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, now + STEP_MS) } }), 401, 2013);
    // The next step, once it has come, works (the challenge still has tries left).
    clock.at += STEP_MS;
    expectOk(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, appNow()) } }));

    const events = await authEvents(user.id);
    expect(events.filter((e) => e.type === 'login_succeeded').map((e) => e.detail)).toContain('password+totp');
    expect(events.filter((e) => e.type === 'mfa_failed').map((e) => e.detail)).toEqual(['wrong_totp_code', 'wrong_totp_code', 'wrong_totp_code']);
    await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'A wrong two-factor code was entered');
  });

  it('lets one of two concurrent uses of one code through', async () => {
    const user = await enrolled();
    const tokens = [await challenge(user), await challenge(user)];
    const code = codeAt(user.totp, appNow());
    const replies = await Promise.all(tokens.map((mfa_token) => call(t.app, 'POST', '/login/mfa', { body: { mfa_token, code } })));
    expect(replies.map((r) => r.body.code).sort((x, y) => x - y)).toEqual([0, 2013]);
    const recovery = user.recoveryCodes[0]!;
    const both = await Promise.all([await challenge(user), await challenge(user)].map((mfa_token) => call(t.app, 'POST', '/login/mfa', { body: { mfa_token, recovery_code: recovery } })));
    expect(both.map((r) => r.body.code).sort((x, y) => x - y)).toEqual([0, 2013]);
  });

  it('takes each recovery code once, in any case and with or without its dash', async () => {
    const user = await enrolled();
    const [code] = user.recoveryCodes;
    const typed = code!.replace('-', '').toUpperCase();
    const reply = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: await challenge(user), recovery_code: typed } });
    expectOk(reply);
    const sessions = await call(t.app, 'GET', '/sessions', { token: reply.body.data.token });
    expect(sessions.body.data.find((s) => s.current)!.auth_method).toBe('recovery_code');
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: await challenge(user), recovery_code: code } }), 401, 2013);
    expectOk(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: await challenge(user), recovery_code: user.recoveryCodes[1] } }));
    const events = await authEvents(user.id);
    expect(events.filter((e) => e.type === 'recovery_code_used')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'login_succeeded').map((e) => e.detail)).toContain('recovery_code');
    await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'A recovery code was used');
  });

  it('takes exactly one of code and recovery_code, and a well-formed mfa_token', async () => {
    const user = await enrolled();
    const token = await challenge(user);
    const code = codeAt(user.totp, appNow());
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token } }), 400, 1001);
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code, recovery_code: user.recoveryCodes[0] } }), 400, 1001);
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: 'x'.repeat(66), code } }), 400, 1001);
    // None of these spent a try: the challenge still works.
    expectOk(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code } }));
  });
});

describe('the login challenge', () => {
  it('cannot be used twice', async () => {
    const user = await enrolled();
    const token = await challenge(user);
    const now = appNow();
    expectOk(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, now) } }));
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, recovery_code: user.recoveryCodes[0] } }), 401, 2012);
  });

  it('cannot be used from another client than the login that got it', async () => {
    const user = await enrolled();
    const reply = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password }, headers: { 'user-agent': 'ChatApp/2.1 (iPhone; iOS 18)' } });
    expectError(reply, 401, 2007);
    const token = (reply.body.data as unknown as { mfa_token: string }).mfa_token;
    const code = codeAt(user.totp, appNow());
    // Another client (another User-Agent, or none) holding the token: refused as an unknown challenge.
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code }, headers: { 'user-agent': 'curl/8.5.0' } }), 401, 2012);
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code } }), 401, 2012);
    // The client that logged in completes it.
    const done = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code }, headers: { 'user-agent': 'ChatApp/2.1 (iPhone; iOS 18)' } });
    expectOk(done);
  });

  it('cannot be used after 5 minutes', async () => {
    const user = await enrolled();
    const token = await challenge(user);
    clock.at += 5 * 60_000 + 1000;
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, appNow()) } }), 401, 2012);
  });

  it('dies after 5 tries, and is not one of another account or with another secret', async () => {
    const user = await enrolled();
    const other = await enrolled();
    const token = await challenge(user);
    const now = appNow();
    const [id, secret] = token.split('.') as [string, string];
    // Another secret under the same id: refused (and counted as a try).
    const forged = `${id}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: forged, code: codeAt(user.totp, now) } }), 401, 2012);
    // The other account's code is no code of this one.
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(other.totp, now) } }), 401, 2013);
    for (let i = 0; i < 3; i++) expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, recovery_code: 'aaaaa-aaaaa' } }), 401, 2013);
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, now) } }), 401, 2012);
    const [row] = await t.database.db.select().from(mfaChallenges).where(eq(mfaChallenges.publicId, id));
    expect(row!.tries).toBe(5);
    expect(row!.secretHash).not.toContain(secret);
  });

  it('dies when the password changes', async () => {
    const user = await enrolled();
    const token = await challenge(user);
    expectOk(await call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: user.password, new_password: 'another-pw-1' } }));
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, appNow()) } }), 401, 2012);
  });

  it('guessing codes meets the per-account 429, at the second step and at login', async () => {
    const user = await enrolled();
    const now = appNow();
    const wrong = codeAt(user.totp, now - 10 * STEP_MS);
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let round = 0; round < 3 && !refused; round++) {
      const token = await challenge(user);
      for (let i = 0; i < 5; i++) {
        const reply = await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: wrong } });
        if (reply.status === 429) {
          refused = reply;
          break;
        }
        expectError(reply, 401, 2013);
      }
    }
    expect(refused).toBeDefined();
    expectError(refused!, 429, 1003);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Eight wrong codes spent the account's budget (LOGIN_FAILURES_PER_ACCOUNT=8): the password is refused too.
    expectError(await call(t.app, 'POST', '/login', { body: { account: user.email, password: user.password } }), 429, 1003);
    const failed = (await authEvents(user.id)).filter((e) => e.type === 'mfa_failed');
    expect(failed).toHaveLength(8);
  });
});

describe('disabling TOTP', () => {
  it('takes the password and a TOTP code; wrong ones are refused', async () => {
    const user = await enrolled();
    const now = appNow();
    expectError(await call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password: 'wrong-pw', code: codeAt(user.totp, now) } }), 403, 2003);
    expectError(await call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password: user.password, code: codeAt(user.totp, now - 3 * STEP_MS) } }), 403, 2013);
    expectError(await call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password: user.password, code: 'not a code' } }), 400, 1001);
    expectOk(await call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password: user.password, code: codeAt(user.totp, now) } }));
    // The password alone signs in again; the recovery codes are gone.
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }));
    expect(await t.database.db.select().from(recoveryCodes).where(eq(recoveryCodes.userId, user.id))).toHaveLength(0);
    const events = await authEvents(user.id);
    expect(events.find((e) => e.type === 'totp_disabled')!.detail).toBe('totp_code');
    expect(events.filter((e) => e.type === 'mfa_failed').map((e) => e.detail).sort()).toEqual(['wrong_password', 'wrong_totp_code']);
    await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'Two-factor sign-in was turned off');
  });

  it('takes a recovery code instead (the authenticator lost), and ends open challenges', async () => {
    const user = await enrolled();
    const token = await challenge(user);
    expectOk(await call(t.app, 'DELETE', '/mfa/totp', { token: user.tokens.token, body: { password: user.password, code: user.recoveryCodes[3] } }));
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: token, code: codeAt(user.totp, appNow()) } }), 401, 2012);
    const events = await authEvents(user.id);
    expect(events.find((e) => e.type === 'totp_disabled')!.detail).toBe('recovery_code');
    expect(events.find((e) => e.type === 'recovery_code_used')!.detail).toBe('totp_disable');
    // Set up and enabled again: new recovery codes, the old ones dead.
    const again = await call(t.app, 'POST', '/mfa/totp/setup', { token: user.tokens.token });
    expectOk(again);
    const totp = new TOTP({ secret: Secret.fromBase32(again.body.data.secret) });
    expectOk(await call(t.app, 'POST', '/mfa/totp/enable', { token: user.tokens.token, body: { code: codeAt(totp, appNow()) } }));
    expectError(await call(t.app, 'POST', '/login/mfa', { body: { mfa_token: await challenge(user), recovery_code: user.recoveryCodes[4] } }), 401, 2013);
  });
});
