// Verified e-mail and changing the address (issue 31) through a real SMTP server in this process:
// the code mailed at registration, verification, resend and its limit, expiry on a moved clock, the
// bound on wrong guesses, the change by code with its notice to the old address, the other sessions
// ended (with their events), an address taken before confirmation, and a reset that proves the address.
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { EMAIL_CODE_MAX_FAILURES, EMAIL_CODES_PER_HOUR } from '../../src/accounts/email/service.js';
import { authEvents, emailCodes, users } from '../../src/db/schema.js';
import { appWith } from '../support/app.js';
import { codeOf, type ReceivedMail } from '../support/smtp.js';
import { call, expectError, expectOk, register, uniqueName, useMailingApp, type Registered } from './helpers.js';

const { t, smtp, clock } = useMailingApp({ MAIL_FROM: 'Chat <no-reply@chat.test>', LOGIN_FAILURES_PER_ACCOUNT: '3' });

const VERIFY_SUBJECT = 'Your e-mail verification code';
const CHANGE_SUBJECT = 'Confirm your new e-mail address';
const NOTICE_SUBJECT = 'Your e-mail address was changed';

/** Mails to `to` with `subject` received so far. */
const mails = (to: string, subject: string) => smtp.received.filter((m) => m.to.includes(to) && m.subject === subject);

/** The `nth` mail (1-based) to `to` with `subject`, once it arrived. */
async function nthMail(to: string, subject: string, nth = 1): Promise<ReceivedMail> {
  await smtp.waitFor(() => mails(to, subject).length >= nth);
  return mails(to, subject)[nth - 1]!;
}

const profile = (token: string) => call(t.app, 'GET', '/profile', { token });
const verify = (token: string, code: unknown) => call(t.app, 'POST', '/email/verify', { token, body: { code } });
const resend = (token: string) => call(t.app, 'POST', '/email/verify/resend', { token });
const change = (token: string, body: Record<string, unknown>) => call(t.app, 'PUT', '/email', { token, body });
const confirm = (token: string, code: unknown) => call(t.app, 'POST', '/email/confirm', { token, body: { code } });
const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } });

/** A code that is not `code`. */
const other = (code: string) => (code === '000000' ? '000001' : '000000');

async function auditOf(userId: number, type: string) {
  return t.database.db.select().from(authEvents).where(and(eq(authEvents.userId, userId), eq(authEvents.type, type)));
}

describe('verifying the address', () => {
  it('registration answers as before and mails a code that verifies the address once', async () => {
    const user = await register(t.app);
    expect((await profile(user.tokens.token)).body.data.email_verified).toBe(false);
    const mail = await nthMail(user.email, VERIFY_SUBJECT);
    expect(mail.from).toBe('no-reply@chat.test');
    const code = codeOf(mail);
    expect(code).toMatch(/^[0-9]{6}$/);

    const reply = await verify(user.tokens.token, code);
    expectOk(reply);
    expect(reply.body.data).toEqual({ email: user.email, email_verified: true });
    expect((await profile(user.tokens.token)).body.data.email_verified).toBe(true);
    expect(await auditOf(user.id, 'email_verified')).toHaveLength(1);
    // Single use; and once verified, there is nothing left to verify or resend.
    expectError(await verify(user.tokens.token, code), 409, 2009);
    expectError(await resend(user.tokens.token), 409, 2009);
    // At rest only a keyed digest.
    const rows = await t.database.db.select().from(emailCodes).where(eq(emailCodes.userId, user.id));
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(rows[0]!.codeHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('needs the session: no token is 1002', async () => {
    expectError(await call(t.app, 'POST', '/email/verify', { body: { code: '123456' } }), 401, 1002);
    expectError(await call(t.app, 'POST', '/email/verify/resend'), 401, 1002);
  });

  it('refuses a code after 15 minutes (moved clock) and a malformed one', async () => {
    const user = await register(t.app);
    const code = codeOf(await nthMail(user.email, VERIFY_SUBJECT));
    expectError(await verify(user.tokens.token, `${code}0`), 400, 1001);
    expectError(await verify(user.tokens.token, Number(code)), 400, 1001);
    clock.offsetMs = 15 * 60_000 + 1000;
    expectError(await verify(user.tokens.token, code), 400, 2008);
    clock.offsetMs = 0;
    expect((await profile(user.tokens.token)).body.data.email_verified).toBe(false);
  });

  it(`kills a code after ${EMAIL_CODE_MAX_FAILURES} wrong tries, even concurrent ones, and the right one afterwards`, async () => {
    const user = await register(t.app);
    const code = codeOf(await nthMail(user.email, VERIFY_SUBJECT));
    const guesses = await Promise.all(Array.from({ length: 12 }, () => verify(user.tokens.token, other(code))));
    for (const g of guesses) expectError(g, 400, 2008);
    expectError(await verify(user.tokens.token, code), 400, 2008);
    const [row] = await t.database.db.select().from(emailCodes).where(eq(emailCodes.userId, user.id));
    expect(row!.failedAttempts).toBe(EMAIL_CODE_MAX_FAILURES);
    // Only counted tries are audited.
    expect(await auditOf(user.id, 'email_verification_failed')).toHaveLength(EMAIL_CODE_MAX_FAILURES);
  });

  it(`resends a new code that replaces the earlier one; at most ${EMAIL_CODES_PER_HOUR} an hour`, async () => {
    const user = await register(t.app);
    const first = codeOf(await nthMail(user.email, VERIFY_SUBJECT));
    expectOk(await resend(user.tokens.token));
    const second = codeOf(await nthMail(user.email, VERIFY_SUBJECT, 2));
    if (first !== second) expectError(await verify(user.tokens.token, first), 400, 2008);
    for (let i = 1; i < EMAIL_CODES_PER_HOUR; i++) expectOk(await resend(user.tokens.token));
    const over = await resend(user.tokens.token);
    expectError(over, 429, 1003);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const last = codeOf(await nthMail(user.email, VERIFY_SUBJECT, EMAIL_CODES_PER_HOUR + 1));
    expectOk(await verify(user.tokens.token, last));
  });

  it('a completed password reset proves the address', async () => {
    const user = await register(t.app);
    expectOk(await call(t.app, 'POST', '/password/forgot', { body: { email: user.email } }));
    const code = codeOf(await nthMail(user.email, 'Your password reset code'));
    expectOk(await call(t.app, 'POST', '/password/reset', { body: { email: user.email, code, new_password: 'a brand new pass' } }));
    const fresh = (await login(user.username, 'a brand new pass')).body.data;
    expect((await profile(fresh.token)).body.data.email_verified).toBe(true);
    expect((await auditOf(user.id, 'email_verified')).map((e) => e.detail)).toEqual(['password_reset']);
  });
});

describe('changing the address', () => {
  async function changeTo(user: Registered, newEmail: string, nth = 1): Promise<string> {
    expectOk(await change(user.tokens.token, { new_email: newEmail, password: user.password }));
    return codeOf(await nthMail(newEmail.toLowerCase(), CHANGE_SUBJECT, nth));
  }

  it('mails a code to the new address; confirming switches, verifies, ends the other sessions and tells the old address', async () => {
    const user = await register(t.app);
    const second = (await login(user.username, user.password)).body.data;
    const newEmail = `${uniqueName('new')}@Example.org`;
    const code = await changeTo(user, newEmail);
    // Nothing changes before the code comes back.
    expect((await profile(user.tokens.token)).body.data.email).toBe(user.email);
    expect(await auditOf(user.id, 'email_change_requested')).toHaveLength(1);

    const reply = await confirm(user.tokens.token, code);
    expectOk(reply);
    expect(reply.body.data).toEqual({ email: newEmail.toLowerCase(), email_verified: true });
    const now = (await profile(user.tokens.token)).body.data;
    expect(now.email).toBe(newEmail.toLowerCase());
    expect(now.email_verified).toBe(true);
    // The other session ended (its auth.session.ended event: test/accounts/account-events.test.ts); the caller's goes on.
    expectError(await profile(second.token), 401, 1002);
    expectError(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: second.refresh_token } }), 401, 1002);
    expect((await auditOf(user.id, 'session_ended')).map((e) => e.detail)).toEqual(['email_change']);
    expect(await auditOf(user.id, 'email_changed')).toHaveLength(1);
    // The old address is told; the new one logs in.
    const notice = await nthMail(user.email, NOTICE_SUBJECT);
    expect(notice.text).toContain('was changed');
    expectOk(await login(newEmail, user.password));
    expectError(await login(user.email, user.password), 401, 2004);
    // Single use.
    expectError(await confirm(user.tokens.token, code), 400, 2008);
  });

  it('checks the password like a password change: wrong is 2003, audited, and counts towards the account budget', async () => {
    const user = await register(t.app);
    const body = { new_email: `${uniqueName('new')}@example.org`, password: 'not-the-password' };
    for (let i = 0; i < 3; i++) expectError(await change(user.tokens.token, body), 403, 2003);
    expect((await auditOf(user.id, 'email_change_failed')).map((e) => e.detail)).toEqual(['wrong_password', 'wrong_password', 'wrong_password']);
    // The budget (3 in this file) is spent: the right password waits too, and so does a login.
    expectError(await change(user.tokens.token, { ...body, password: user.password }), 429, 1003);
    expectError(await login(user.username, user.password), 429, 1003);
    expect(mails(body.new_email, CHANGE_SUBJECT)).toHaveLength(0);
  });

  it('answers a taken address as a free one (a code is mailed, the code budget spent alike); the confirmation refuses it with 2002; its own is 2010', async () => {
    const user = await register(t.app);
    const other = await register(t.app);
    const free = `${uniqueName('free')}@example.org`;
    const answers = [];
    // The code budget is spent by taken and free addresses alike, and once spent both answer 1003.
    for (let i = 0; i <= EMAIL_CODES_PER_HOUR; i++) {
      const reply = await change(user.tokens.token, { new_email: i % 2 === 0 ? other.email.toUpperCase() : free, password: user.password });
      answers.push(`${reply.status} ${reply.body.code}`);
    }
    expect(answers).toEqual([...Array<string>(EMAIL_CODES_PER_HOUR).fill('200 0'), '429 1003']);
    // The last code went to the taken address (its owner reads it; only its confirmation would tell).
    const code = codeOf(await nthMail(other.email, CHANGE_SUBJECT, Math.ceil(EMAIL_CODES_PER_HOUR / 2)));
    expectError(await confirm(user.tokens.token, code), 409, 2002);
    expect((await profile(user.tokens.token)).body.data.email).toBe(user.email);
    expect((await auditOf(user.id, 'email_change_failed')).map((e) => e.detail)).toEqual(['email_taken']);
    expectError(await change(user.tokens.token, { new_email: user.email, password: user.password }), 409, 2010);
  });

  it('refuses at confirmation an address registered since the code was mailed (the unique index decides)', async () => {
    const user = await register(t.app);
    const wanted = `${uniqueName('race')}@example.org`;
    const code = await changeTo(user, wanted);
    await register(t.app, { email: wanted });
    expectError(await confirm(user.tokens.token, code), 409, 2002);
    expect((await profile(user.tokens.token)).body.data.email).toBe(user.email);
    expect((await auditOf(user.id, 'email_change_failed')).map((e) => e.detail)).toEqual(['email_taken']);
    const [row] = await t.database.db.select({ email: users.email }).from(users).where(eq(users.id, user.id));
    expect(row!.email).toBe(user.email);
  });

  it('a change code expires after 15 minutes, dies after wrong tries, and only the latest request counts', async () => {
    const user = await register(t.app);
    const a = `${uniqueName('a')}@example.org`;
    const b = `${uniqueName('b')}@example.org`;
    const codeA = await changeTo(user, a);
    clock.offsetMs = 15 * 60_000 + 1000;
    expectError(await confirm(user.tokens.token, codeA), 400, 2008);
    clock.offsetMs = 0;
    const codeB = await changeTo(user, b);
    // The request for b retired a's code.
    if (codeA !== codeB) expectError(await confirm(user.tokens.token, codeA), 400, 2008);
    for (let i = 0; i < EMAIL_CODE_MAX_FAILURES; i++) expectError(await confirm(user.tokens.token, other(codeB)), 400, 2008);
    expectError(await confirm(user.tokens.token, codeB), 400, 2008);
    expect((await profile(user.tokens.token)).body.data.email).toBe(user.email);
  });

  it('a reset code mailed to the old address dies with the change; a verification code of the old address too', async () => {
    const user = await register(t.app);
    const verifyCode = codeOf(await nthMail(user.email, VERIFY_SUBJECT));
    expectOk(await call(t.app, 'POST', '/password/forgot', { body: { email: user.email } }));
    const resetCode = codeOf(await nthMail(user.email, 'Your password reset code'));
    const newEmail = `${uniqueName('new')}@example.org`;
    expectOk(await confirm(user.tokens.token, await changeTo(user, newEmail)));
    expectError(await call(t.app, 'POST', '/password/reset', { body: { email: newEmail, code: resetCode, new_password: 'taken over pass' } }), 400, 2005);
    // The new address is verified already.
    expectError(await verify(user.tokens.token, verifyCode), 409, 2009);
    expectOk(await login(newEmail, user.password));
  });
});

describe('PUT /email and the per-client auth budget (RATE_LIMIT_AUTH_PER_MIN=3 here)', () => {
  it('counts each request in the auth budget of the client address, as a login: the 4th from one address is 429', async () => {
    const app = appWith(t, { config: { ...t.config, rateLimit: { ...t.config.rateLimit, authPerMin: 3, trustProxy: 'xff' } } });
    const user = await register(t.app);
    const from = (address: string, newEmail: string) =>
      call(app, 'PUT', '/email', { token: user.tokens.token, body: { new_email: newEmail, password: user.password }, headers: { 'x-forwarded-for': address } });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await from('198.51.100.7', `${uniqueName('n')}@example.org`)).body.code);
    expect(codes).toEqual([0, 0, 0, 1003]);
    // The budget is the address's, shared with logins from it.
    expectError(await call(app, 'POST', '/login', { body: { account: user.username, password: user.password }, headers: { 'x-forwarded-for': '198.51.100.7' } }), 429, 1003);
    expectOk(await from('198.51.100.8', `${uniqueName('n')}@example.org`));
  });
});

describe('without mail', () => {
  it('in production without SMTP_URL the endpoints answer 1004 and registration still works', async () => {
    const app = appWith(t, { config: { ...t.config, nodeEnv: 'production', mail: { smtpUrl: undefined, from: 'x <x@example.com>' } } });
    const user = await register(app);
    expectError(await call(app, 'POST', '/email/verify/resend', { token: user.tokens.token }), 404, 1004);
    expectError(await call(app, 'POST', '/email/verify', { token: user.tokens.token, body: { code: '123456' } }), 404, 1004);
    expectError(await call(app, 'PUT', '/email', { token: user.tokens.token, body: { new_email: 'x@example.org', password: user.password } }), 404, 1004);
    expectError(await call(app, 'POST', '/email/confirm', { token: user.tokens.token, body: { code: '123456' } }), 404, 1004);
    expect((await call(app, 'GET', '/profile', { token: user.tokens.token })).body.data.email_verified).toBe(false);
    expect(await t.database.db.select().from(emailCodes).where(eq(emailCodes.userId, user.id))).toHaveLength(0);
  });
});
