// Secrets at rest, on PGlite and PostgreSQL: after a full account session (register, logins, refresh,
// reuse, password change, reset by mailed code, logout) no row of any table holds a token, a token
// secret, a reset or e-mail verification code or a password; only SHA-256 digests and argon2id hashes with the OWASP
// parameters. After account deletion no table holds a personal field of the user.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_TIMEOUT, call, expectOk, uniqueName } from '../accounts/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { PASSWORD_HASH_COST } from '../../src/accounts/passwords.js';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp.js';

let t: TestApp;
let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startTestSmtp();
  // argon2id at its production cost: the stored hashes are read for its parameters.
  t = await buildTestApp({ SMTP_URL: smtp.url, TRUST_PROXY: 'xff' }, { areas: { relay: false }, hashCost: PASSWORD_HASH_COST });
}, APP_TIMEOUT);
afterAll(async () => {
  await t?.close();
  await smtp?.close();
}, APP_TIMEOUT);

/** Every table of the public schema: a table added later is covered without editing this test. */
async function tables(): Promise<string[]> {
  const result: unknown = await t.database.db.execute(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`);
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows).map((r) => (r as { table_name: string }).table_name);
}

/** Every row of the table as PostgreSQL renders it to text (what a dump would hold), whatever the driver. */
async function dump(table: string): Promise<string[]> {
  const result: unknown = await t.database.db.execute(sql.raw(`select row_to_json(t)::text as row from ${table} t`));
  const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
  return rows.map((r) => (r as { row: string }).row);
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('secrets at rest', () => {
  it('no table holds a token, a token secret or a password after a full session; hashes are argon2id m=19456,t=2,p=1', async () => {
    const username = uniqueName('rest');
    const passwords = ['first-Secret-pw', 'second-Secret-pw'];
    const tokens: { token: string; refresh_token: string }[] = [];
    const api = (method: string, path: string, body?: unknown, token?: string) => call(t.app, method, path, { ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });

    const registered = await api('POST', '/register', { username, email: `${username}@example.com`, password: passwords[0] });
    expectOk(registered);
    tokens.push(registered.body.data);
    const login = await api('POST', '/login', { account: username, password: passwords[0] });
    tokens.push(login.body.data);
    const refreshed = await api('POST', '/refresh-token', { refresh_token: login.body.data.refresh_token });
    expectOk(refreshed);
    tokens.push(refreshed.body.data);
    // Reuse of the rotated token: that session is revoked, and its rotated token is kept for detection.
    expect((await api('POST', '/refresh-token', { refresh_token: login.body.data.refresh_token })).body.code).toBe(1002);
    const third = await api('POST', '/login', { account: username, password: passwords[0] });
    tokens.push(third.body.data);
    const refreshedAgain = await api('POST', '/refresh-token', { refresh_token: third.body.data.refresh_token });
    tokens.push(refreshedAgain.body.data);
    expectOk(await api('PUT', '/password', { old_password: passwords[0], new_password: passwords[1] }, refreshedAgain.body.data.token));
    const fourth = await api('POST', '/login', { account: username, password: passwords[1] });
    tokens.push(fourth.body.data);
    expectOk(await api('POST', '/logout', undefined, fourth.body.data.token));

    // Forgotten password: a code by mail, then a reset (the code must not be at rest either).
    expectOk(await api('POST', '/password/forgot', { email: `${username}@example.com` }));
    const code = codeOf(await smtp.waitFor((m) => m.to.includes(`${username}@example.com`) && m.subject.includes('reset code')));
    // Issue 31: the verification code registration mailed, stored only as its digest as well.
    const verificationCode = codeOf(await smtp.waitFor((m) => m.to.includes(`${username}@example.com`) && m.subject.includes('verification code')));
    passwords.push('third-Secret-pw');
    expectOk(await api('POST', '/password/reset', { email: `${username}@example.com`, code, new_password: passwords[2] }));
    const fifth = await api('POST', '/login', { account: username, password: passwords[2] });
    tokens.push(fifth.body.data);
    // The reset ended every session, rotated tokens with them: rotate once more so one is kept.
    const sixth = await api('POST', '/refresh-token', { refresh_token: fifth.body.data.refresh_token });
    expectOk(sixth);
    tokens.push(sixth.body.data);

    const names = await tables();
    expect(names).toEqual(expect.arrayContaining(['users', 'sessions', 'rotated_refresh_tokens', 'password_reset_codes', 'auth_events']));
    const rows = (await Promise.all(names.map(dump))).flat();
    const text = rows.join('\n');
    expect(rows.length).toBeGreaterThanOrEqual(5);
    const secrets = tokens.flatMap((set) => [set.token, set.refresh_token]).flatMap((token) => [token, token.split('.')[1]!]);
    for (const secret of [...secrets, ...passwords]) expect(text, `found ${secret.slice(0, 6)}… at rest`).not.toContain(secret);
    // The code appears nowhere as itself (a 6-digit string could occur inside a hex digest by chance, so check the JSON fields).
    const codes = (await dump('password_reset_codes')).map((r) => JSON.parse(r) as Record<string, unknown>);
    expect(codes.length).toBeGreaterThan(0);
    for (const row of codes) for (const value of Object.values(row)) expect(value).not.toBe(code);
    for (const row of codes) expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    const emailCodes = (await dump('email_codes')).map((r) => JSON.parse(r) as Record<string, unknown>);
    expect(emailCodes.length).toBeGreaterThan(0);
    for (const row of emailCodes) for (const value of Object.values(row)) expect(value).not.toBe(verificationCode);
    for (const row of emailCodes) expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    const events = (await dump('auth_events')).map((r) => JSON.parse(r) as Record<string, unknown>);
    for (const row of events) for (const value of Object.values(row)) expect(String(value)).not.toBe(code);

    // What is there instead: the digest of each live secret, and the password as an argon2id hash.
    const live = sixth.body.data as { token: string; refresh_token: string };
    // The access token is a signed JWT: the row holds only its jti (the session's access id), not the token.
    expect(text).toContain(JSON.parse(Buffer.from(live.token.split('.')[1]!, 'base64url').toString('utf8')).jti as string);
    expect(text).toContain(sha256(live.refresh_token.split('.')[1]!));
    const user = JSON.parse((await dump('users')).find((r) => r.includes(username))!) as { password_hash: string };
    expect(user.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{16,}\$[A-Za-z0-9+/]{32,}$/);
    // A rotated refresh token is kept only as its digest too.
    const rotated = (await dump('rotated_refresh_tokens')).map((r) => JSON.parse(r) as { refresh_hash: string });
    expect(rotated.length).toBeGreaterThan(0);
    for (const r of rotated) expect(r.refresh_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves no personal field of a deleted user in any table', async () => {
    const username = uniqueName('gone');
    const email = `${username}@example.com`;
    const headers = { 'user-agent': 'GoneDevice/9.9', 'x-forwarded-for': '198.51.100.99' };
    const api = (method: string, path: string, body?: unknown, token?: string) => call(t.app, method, path, { headers, ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });
    const registered = await api('POST', '/register', { username, email, password: 'gone-Secret-pw', nickname: 'Gone Nickname' });
    expectOk(registered);
    const token = registered.body.data.token as string;
    expectOk(await api('PUT', '/profile', { avatar: 'https://cdn.example.com/gone-avatar.png', phone: '+1 555 0100 999', gender: 2 }, token));
    expect((await api('POST', '/login', { account: email.toUpperCase(), password: 'nope-Secret-pw' })).body.code).toBe(2003);
    expectOk(await api('POST', '/login', { account: username, password: 'gone-Secret-pw' }));
    expectOk(await api('POST', '/password/forgot', { email }));
    await smtp.waitFor((m) => m.to.includes(email));
    expectOk(await api('DELETE', '/account', { password: 'gone-Secret-pw' }, token));

    const personal = [username, email, 'Gone Nickname', 'gone-avatar', '555 0100 999', 'GoneDevice', '198.51.100.99'];
    for (const table of await tables()) {
      const text = (await dump(table)).join('\n').toLowerCase();
      for (const field of personal) expect(text, `${field} left in ${table}`).not.toContain(field.toLowerCase());
    }
  });
});
