// DELETE /api/v1/auth/account (issue 16): password confirmed, every session ended, the username and
// e-mail free again, no personal field of the user left in any table.
import { sql } from 'drizzle-orm';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authEvents } from '../../src/db/schema.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ TRUST_PROXY: 'xff' }, { areas: { relay: false } });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

const deleteAccount = (token: string | undefined, body?: unknown) => call(t.app, 'DELETE', '/account', { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });

/** Every row of every table of the public schema, as row_to_json text. */
export async function dumpAllTables(database: TestApp['database']): Promise<Record<string, string[]>> {
  const tables: unknown = await database.db.execute(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`);
  const names = (Array.isArray(tables) ? tables : (tables as { rows: unknown[] }).rows).map((r) => (r as { table_name: string }).table_name);
  const out: Record<string, string[]> = {};
  for (const name of names) {
    const result: unknown = await database.db.execute(sql.raw(`select row_to_json(t)::text as row from "${name}" t`));
    out[name] = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows).map((r) => (r as { row: string }).row);
  }
  return out;
}

describe('DELETE /account', () => {
  it('refuses a wrong password with 2003 (403) and changes nothing', async () => {
    const user = await register(t.app);
    const reply = await deleteAccount(user.tokens.token, { password: 'not my password' });
    expectError(reply, 403, 2003);
    expectOk(await call(t.app, 'GET', '/profile', { token: user.tokens.token }));
  });

  it('validates the body and needs an access token', async () => {
    const user = await register(t.app);
    expectError(await deleteAccount(user.tokens.token, {}), 400, 1001);
    expectError(await deleteAccount(user.tokens.token, { password: '' }), 400, 1001);
    expectError(await deleteAccount(user.tokens.token, { password: 42 }), 400, 1001);
    expectError(await deleteAccount(user.tokens.token, { password: 'x'.repeat(1025) }), 400, 1001);
    expectError(await deleteAccount(user.tokens.token), 400, 1001);
    expectError(await deleteAccount(undefined, { password: user.password }), 401, 1002);
    expectOk(await call(t.app, 'GET', '/profile', { token: user.tokens.token }));
  });

  it('ends every session, frees the username and e-mail, and leaves no personal field anywhere', async () => {
    const headers = { 'user-agent': 'DeletionPhone/1.0', 'x-forwarded-for': '203.0.113.77' };
    const user = await register(t.app, { nickname: 'Deleted Nick' });
    expectOk(await call(t.app, 'PUT', '/profile', { token: user.tokens.token, body: { avatar: 'https://cdn.example.com/deleted-avatar.png', phone: '+86 138 0000 7777' } }));
    const other = (await call(t.app, 'POST', '/login', { body: { account: user.email, password: user.password }, headers })).body.data;
    // A failed login typing the username leaves a row with the account as typed.
    expectError(await call(t.app, 'POST', '/login', { body: { account: user.username.toUpperCase(), password: 'wrong-one' }, headers }), 401, 2003);

    const reply = await deleteAccount(user.tokens.token, { password: user.password });
    expectOk(reply);
    expect(reply.body.data).toBeNull();

    for (const s of [user.tokens, other]) {
      expectError(await call(t.app, 'GET', '/profile', { token: s.token }), 401, 1002);
      expectError(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: s.refresh_token } }), 401, 1002);
    }
    const all = await dumpAllTables(t.database);
    for (const [table, rows] of Object.entries(all)) {
      const text = rows.join('\n').toLowerCase();
      for (const personal of [user.username, user.email, 'Deleted Nick', 'deleted-avatar', '138 0000 7777', 'DeletionPhone', '203.0.113.77']) {
        expect(text, `${personal} still stored in ${table}: ${rows.find((r) => r.toLowerCase().includes(personal.toLowerCase()))}`).not.toContain(personal.toLowerCase());
      }
    }
    expect(Object.keys(all)).toEqual(expect.arrayContaining(['users', 'sessions', 'rotated_refresh_tokens', 'password_reset_codes', 'auth_events']));
    // What stays: the audit rows with the user id, their types and times only.
    const rows = await t.database.db.select().from(authEvents).where(eq(authEvents.userId, user.id));
    expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(['registered', 'login_succeeded', 'login_failed', 'session_ended', 'account_deleted']));
    for (const row of rows) expect([row.account, row.ip, row.userAgent]).toEqual([null, null, null]);
    expect(rows.filter((r) => r.type === 'session_ended' && r.detail === 'account_deletion')).toHaveLength(2);

    // Gone for login (this attempt is a new event of whoever types the name now, recorded as such);
    // username and e-mail are free again.
    expectError(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }), 401, 2004);
    expectOk(await call(t.app, 'POST', '/register', { body: { username: user.username, email: user.email, password: 'a fresh start' } }));
  });
});
