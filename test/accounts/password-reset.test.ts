// Forgotten password (issue 16) through a real SMTP server in this process: codes by mail, expiry,
// try limits, reuse, the hourly cap, the same answer for unknown e-mails, notices. The same time for
// them is measured in password-reset-timing.test.ts, which runs alone.
import { createHmac, hash, hkdfSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { authEvents, passwordResetCodes } from '../../src/db/schema.js';
import { createLogger } from '../../src/logger.js';
import { codeOf, type ReceivedMail } from '../support/smtp.js';
import { call, expectError, expectOk, register, useMailingApp, type Registered } from './helpers.js';
import { appWith } from '../support/app.js';

const { t, smtp, clock } = useMailingApp({ MAIL_FROM: 'Chat <no-reply@chat.test>' });

const forgot = (email: unknown, app = t.app) => call(app, 'POST', '/password/forgot', { body: { email } });
const reset = (body: Record<string, unknown>, app = t.app) => call(app, 'POST', '/password/reset', { body });
const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } });

/** Mails to `to` received so far, but for the verification code every registration mails (issue 31). */
const mailsTo = (to: string) => smtp.received.filter((m) => m.to.includes(to) && m.subject !== 'Your e-mail verification code');

async function codeFor(user: Registered, nth = 1): Promise<string> {
  expectOk(await forgot(user.email));
  const mail = await smtp.waitFor((m) => m.to.includes(user.email) && m.subject.includes('reset code') && mailsTo(user.email).filter((x) => x.subject.includes('reset code')).indexOf(m) === nth - 1);
  return codeOf(mail);
}

describe('POST /password/forgot and /password/reset', () => {
  it('mails a 6-digit code; the reset sets the password, ends every session and sends a notice', async () => {
    const user = await register(t.app);
    const second = (await login(user.username, user.password)).body.data;
    const code = await codeFor(user);
    const mail = mailsTo(user.email)[0]!;
    expect(mail.from).toBe('no-reply@chat.test');
    expect(code).toMatch(/^[0-9]{6}$/);

    const reply = await reset({ email: user.email.toUpperCase(), code, new_password: 'a brand new pass' });
    expectOk(reply);
    expect(reply.body.data).toBeNull();
    for (const s of [user.tokens, second]) {
      expectError(await call(t.app, 'GET', '/profile', { token: s.token }), 401, 1002);
      expectError(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: s.refresh_token } }), 401, 1002);
    }
    expectError(await login(user.username, user.password), 401, 2003);
    expectOk(await login(user.username, 'a brand new pass'));
    const notice = await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'Your password was changed');
    expect(notice.text).not.toContain('a brand new pass');
    // Used: the same code again is refused.
    expectError(await reset({ email: user.email, code, new_password: 'yet another pass' }), 400, 2005);
    // Stored only as a salted digest.
    const rows = await t.database.db.select().from(passwordResetCodes).where(eq(passwordResetCodes.userId, user.id));
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(rows[0]!.codeHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers an unknown e-mail with the same body, and sends nothing', async () => {
    const user = await register(t.app);
    const unknown = `nobody_${Date.now()}@example.com`;
    const a = await forgot(unknown);
    const b = await forgot(user.email);
    expect(a.status).toBe(b.status);
    expect(a.body).toEqual(b.body);
    expectOk(a);
    // Mail goes out in order: the known address's message arriving means the unknown one's never will.
    await smtp.waitFor((m) => m.to.includes(user.email));
    expect(mailsTo(unknown)).toHaveLength(0);
    expectError(await reset({ email: unknown, code: '123456', new_password: 'a brand new pass' }), 400, 2005);
  });

  it('refuses a code after 15 minutes with 2005', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    clock.offsetMs = 15 * 60_000 + 1000;
    expectError(await reset({ email: user.email, code, new_password: 'a brand new pass' }), 400, 2005);
    clock.offsetMs = 0;
    expectOk(await login(user.username, user.password));
  });

  it('kills a code after 5 wrong tries, even for the right code afterwards', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) expectError(await reset({ email: user.email, code: wrong, new_password: 'a brand new pass' }), 400, 2005);
    expectError(await reset({ email: user.email, code, new_password: 'a brand new pass' }), 400, 2005);
    expectOk(await login(user.username, user.password));
  });

  it('accepts the right code after fewer than 5 wrong tries', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    const wrong = code === '999999' ? '999998' : '999999';
    for (let i = 0; i < 4; i++) expectError(await reset({ email: user.email, code: wrong, new_password: 'a brand new pass' }), 400, 2005);
    expectOk(await reset({ email: user.email, code, new_password: 'a brand new pass' }));
  });

  it('every code mailed in the last 15 minutes works (issue 32 #6: only the newest did)', async () => {
    const user = await register(t.app);
    const first = await codeFor(user, 1);
    const second = await codeFor(user, 2);
    // The first still works although a second was mailed after it.
    expect(second).toMatch(/^[0-9]{6}$/);
    expectOk(await reset({ email: user.email, code: first, new_password: 'a brand new pass' }));
  });

  it('mails at most 10 codes an hour per account (with the budgets per client off), with the same answer', async () => {
    const user = await register(t.app);
    for (let i = 0; i < 12; i++) expectOk(await forgot(user.email));
    await smtp.waitFor(() => mailsTo(user.email).length >= 10);
    // A later message would follow the tenth in order: one to another address proves the queue is drained.
    const probe = await register(t.app);
    expectOk(await forgot(probe.email));
    await smtp.waitFor((m) => m.to.includes(probe.email));
    expect(mailsTo(user.email)).toHaveLength(10);
    clock.offsetMs = 61 * 60_000;
    expectOk(await forgot(user.email));
    await smtp.waitFor(() => mailsTo(user.email).length === 11);
    const events = await t.database.db.select().from(authEvents).where(eq(authEvents.userId, user.id));
    expect(events.filter((e) => e.type === 'password_reset_requested').map((e) => e.detail)).toEqual([...Array<string>(10).fill('code_sent'), 'hourly_limit', 'hourly_limit', 'code_sent']);
  });

  it('refuses a common new password or one equal to the username or e-mail with 1001, without using the code', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    for (const new_password of ['password1', 'Qwerty123', user.username.toUpperCase(), user.email]) {
      if (new_password.length > 50) continue;
      const reply = await reset({ email: user.email, code, new_password });
      expectError(reply, 400, 1001);
      expect(reply.body.message).toMatch(/^new_password: /);
    }
    expectOk(await reset({ email: user.email, code, new_password: 'a brand new pass' }));
  });

  it('validates every field with 1001', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['email', { code: '123456', new_password: 'a brand new pass' }],
      ['email', { email: 'not an address', code: '123456', new_password: 'a brand new pass' }],
      ['email', { email: `${'a'.repeat(250)}@example.com`, code: '123456', new_password: 'a brand new pass' }],
      ['code', { email: 'a@example.com', code: '12345', new_password: 'a brand new pass' }],
      ['code', { email: 'a@example.com', code: 123456, new_password: 'a brand new pass' }],
      ['code', { email: 'a@example.com', code: '1234567', new_password: 'a brand new pass' }],
      ['new_password', { email: 'a@example.com', code: '123456', new_password: '12345' }],
      ['new_password', { email: 'a@example.com', code: '123456', new_password: 'x'.repeat(51) }],
    ];
    for (const [field, body] of cases) {
      const reply = await reset(body);
      expectError(reply, 400, 1001);
      expect(reply.body.message.startsWith(`${field}: `), reply.body.message).toBe(true);
    }
    for (const email of [undefined, '', 'x'.repeat(5000), 42, ['a@example.com']]) expectError(await forgot(email), 400, 1001);
  });

  it('notifies the account e-mail when the password is changed', async () => {
    const user = await register(t.app);
    expectOk(await call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: user.password, new_password: 'changed it myself' } }));
    const notice = await smtp.waitFor((m) => m.to.includes(user.email) && m.subject === 'Your password was changed');
    expect(notice.text).toMatch(/was changed/);
  });
});

describe('a banned account', () => {
  const moderate = (method: 'POST' | 'DELETE', userId: number) =>
    t.app.request(`/internal/v1/users/${userId}/ban`, { method, headers: { 'X-Internal-Token': t.internalToken, 'Content-Type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });

  it('is refused with 2006 once the code is right, like a login: nothing set, the code kept for after the ban', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    expect((await moderate('POST', user.id)).status).toBe(200);
    // A wrong code still says only 2005: the ban is told to the holder of a right one.
    expectError(await reset({ email: user.email, code: code === '000000' ? '000001' : '000000', new_password: 'banned new pass' }), 400, 2005);
    const refused = await reset({ email: user.email, code, new_password: 'banned new pass' });
    expectError(refused, 403, 2006);
    expect(refused.body.data).toEqual({ until: null });
    const details = await t.database.db.select({ detail: authEvents.detail }).from(authEvents).where(sql`${authEvents.userId} = ${user.id} and ${authEvents.type} = 'password_reset_failed'`);
    expect(details.map((row) => row.detail)).toEqual(['wrong_code', 'account_banned']);

    expect((await moderate('DELETE', user.id)).status).toBe(200);
    expectOk(await login(user.username, user.password));
    expectOk(await reset({ email: user.email, code, new_password: 'after the ban' }));
    expectOk(await login(user.username, 'after the ban'));
  });
});

describe('outstanding codes after a password change (issue 32 #11)', () => {
  it('a password change revokes every outstanding code', async () => {
    const user = await register(t.app);
    const codes = [await codeFor(user, 1), await codeFor(user, 2)];
    expectOk(await call(t.app, 'PUT', '/password', { token: user.tokens.token, body: { old_password: user.password, new_password: 'changed it myself' } }));
    for (const code of codes) expectError(await reset({ email: user.email, code, new_password: 'a brand new pass' }), 400, 2005);
    expectOk(await login(user.username, 'changed it myself'));
  });

  it('a completed reset revokes every other outstanding code', async () => {
    const user = await register(t.app);
    const codes = [await codeFor(user, 1), await codeFor(user, 2), await codeFor(user, 3)];
    expectOk(await reset({ email: user.email, code: codes[1]!, new_password: 'a brand new pass' }));
    for (const code of [codes[0]!, codes[2]!]) if (code !== codes[1]) expectError(await reset({ email: user.email, code, new_password: 'yet another pass' }), 400, 2005);
    expectOk(await login(user.username, 'a brand new pass'));
  });
});

describe('concurrent guesses (issue 32 #10)', () => {
  /** Tries counted per code: the requester's and the other addresses' together. */
  const attemptsOf = async (userId: number) =>
    (await t.database.db.select().from(passwordResetCodes).where(eq(passwordResetCodes.userId, userId))).map((r) => r.failedAttempts + r.requesterFailedAttempts);

  it('41 concurrent wrong guesses count at most 5 tries: the code then dies, the right code too', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    const wrongs = Array.from({ length: 41 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
    const replies = await Promise.all(wrongs.map((wrong) => reset({ email: user.email, code: wrong, new_password: 'a brand new pass' })));
    for (const reply of replies) expectError(reply, 400, 2005);
    expect(await attemptsOf(user.id)).toEqual([5]);
    expectError(await reset({ email: user.email, code, new_password: 'a brand new pass' }), 400, 2005);
    expectOk(await login(user.username, user.password));
  });

  it('with 10 live codes, 41 concurrent wrong guesses answer 2005 (no deadlock, no 5xx) and count 5 tries on each code', async () => {
    const user = await register(t.app);
    const codes: string[] = [];
    for (let n = 1; n <= 10; n++) codes.push(await codeFor(user, n));
    const wrongs = Array.from({ length: 60 }, (_, i) => String(500_000 + i * 4099)).filter((c) => !codes.includes(c)).slice(0, 41);
    const replies = await Promise.all(wrongs.map((wrong) => reset({ email: user.email, code: wrong, new_password: 'a brand new pass' })));
    expect(replies.map((r) => r.status).filter((s) => s !== 400)).toEqual([]);
    expect(await attemptsOf(user.id)).toEqual(Array<number>(10).fill(5));
    for (const code of codes) expectError(await reset({ email: user.email, code, new_password: 'a brand new pass' }), 400, 2005);
  });

  it('the right code among 4 concurrent wrong ones works', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    const guesses = [...Array.from({ length: 4 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0')), code];
    const replies = await Promise.all(guesses.map((guess) => reset({ email: user.email, code: guess, new_password: 'a brand new pass' })));
    expect(replies.map((r) => r.body.code)).toEqual([2005, 2005, 2005, 2005, 0]);
    expectOk(await login(user.username, 'a brand new pass'));
  });
});

describe('reset codes at rest (issue 32 #5)', () => {
  /** The code row as a dump shows it: every column, whatever the schema calls them. */
  async function dumpedCodeRow(userId: number): Promise<Record<string, unknown>> {
    const result: unknown = await t.database.db.execute(sql`select row_to_json(c)::text as row from password_reset_codes c where user_id = ${userId} order by id desc limit 1`);
    const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<{ row: string }>;
    return JSON.parse(rows[0]!.row) as Record<string, unknown>;
  }

  /** Every 6-digit code whose digest under `digest` is the stored one: a brute force over all 10^6. */
  function bruteForce(stored: string, digest: (code: string) => string): string[] {
    const found: string[] = [];
    for (let n = 0; n < 1_000_000; n++) {
      const candidate = String(n).padStart(6, '0');
      if (digest(candidate) === stored) found.push(candidate);
    }
    return found;
  }

  it('a dump of the row alone does not give the code: the digest is keyed with AUTH_KEY_SECRET, and the code still works', async () => {
    const user = await register(t.app);
    const code = await codeFor(user);
    const row = await dumpedCodeRow(user.id);
    const stored = String(row.code_hash);
    // The old scheme, SHA-256 of `<salt>:<code>`, with anything of the row as the salt: 10^6 candidates
    // found the code in about a second. Now no candidate matches whatever the row offers.
    const salts = (row.code_salt === undefined ? [row.user_id, row.id] : [row.code_salt]).map(String);
    // Node's one-shot hash: the same digest as createHash's, four times faster over the million candidates.
    const sha256 = (text: string) => hash('sha256', text);
    const withoutSecret = bruteForce(stored, (c) => salts.map((salt) => sha256(`${salt}:${c}`)).find((d) => d === stored) ?? '');
    expect(withoutSecret, 'a SHA-256 brute force over the dumped row found the code').toEqual([]);
    // With the server's secret (not in the database) the documented scheme gives exactly the mailed code:
    // HMAC-SHA256(HKDF-SHA256(AUTH_KEY_SECRET, info "reset-code-digest"), `<user id>:<code>`).
    const subkey = Buffer.from(hkdfSync('sha256', t.config.authKeySecret!, Buffer.alloc(0), 'reset-code-digest', 32));
    expect(createHmac('sha256', subkey).update(`${user.id}:${code}`).digest('hex')).toBe(stored);
    // Another secret on the same database does not accept the code; the app's own does.
    const otherSecret = appWith(t, { config: { ...t.config, authKeySecret: 'another-secret-of-at-least-32-characters!' } });
    expectError(await reset({ email: user.email, code, new_password: 'a brand new pass' }, otherSecret), 400, 2005);
    expectOk(await reset({ email: user.email, code, new_password: 'a brand new pass' }));
    expectOk(await login(user.username, 'a brand new pass'));
  }, 120_000);
});

describe('without SMTP_URL', () => {
  it('in production the reset endpoints answer 1004 (404)', async () => {
    const app = appWith(t, { config: { ...t.config, nodeEnv: 'production', mail: { smtpUrl: undefined, from: 'x <x@example.com>' } } });
    const user = await register(t.app);
    expectError(await forgot(user.email, app), 404, 1004);
    expectError(await reset({ email: user.email, code: '123456', new_password: 'a brand new pass' }, app), 404, 1004);
  });

  it('outside production the message is written to the log at warn, and its code works', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const logger = createLogger({ level: 'warn', destination });
    const app = appWith(t, { config: { ...t.config, nodeEnv: 'development', mail: { smtpUrl: undefined, from: 'x <x@example.com>' } }, logger: logger });
    const user = await register(t.app);
    expectOk(await forgot(user.email, app));
    const deadline = Date.now() + 5000;
    while (!lines.some((l) => l.includes(user.email)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const line = JSON.parse(lines.find((l) => l.includes(user.email))!) as { level: number; msg: string; mail: ReceivedMail };
    expect(line.level).toBe(40);
    const code = /Your code: ([0-9]{6})/.exec(line.mail.text)![1]!;
    expectOk(await reset({ email: user.email, code, new_password: 'a brand new pass' }, app));
  });
});
