// Secrets at rest, on PGlite and PostgreSQL: after a full account session (register, logins, refresh,
// reuse, password change, logout) no row of any table holds a token, a token secret or a password;
// only SHA-256 digests and argon2id hashes with the OWASP parameters.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_TIMEOUT, call, expectOk, uniqueName } from '../auth/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
}, APP_TIMEOUT);
afterAll(() => t?.close(), APP_TIMEOUT);

/** Every row of the table as PostgreSQL renders it to text (what a dump would hold), whatever the driver. */
async function dump(table: string): Promise<string[]> {
  const result = (await t.database.db.execute(sql.raw(`select row_to_json(t)::text as row from ${table} t`))) as unknown;
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

    const rows = [...(await dump('users')), ...(await dump('sessions')), ...(await dump('rotated_refresh_tokens'))];
    const text = rows.join('\n');
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const secrets = tokens.flatMap((set) => [set.token, set.refresh_token]).flatMap((token) => [token, token.split('.')[1]!]);
    for (const secret of [...secrets, ...passwords]) expect(text, `found ${secret.slice(0, 6)}… at rest`).not.toContain(secret);

    // What is there instead: the digest of each live secret, and the password as an argon2id hash.
    const live = refreshedAgain.body.data as { token: string; refresh_token: string };
    expect(text).toContain(sha256(live.token.split('.')[1]!));
    expect(text).toContain(sha256(live.refresh_token.split('.')[1]!));
    const user = JSON.parse((await dump('users')).find((r) => r.includes(username))!) as { password_hash: string };
    expect(user.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{16,}\$[A-Za-z0-9+/]{32,}$/);
    // A rotated refresh token is kept only as its digest too.
    const rotated = (await dump('rotated_refresh_tokens')).map((r) => JSON.parse(r) as { refresh_hash: string });
    expect(rotated.length).toBeGreaterThan(0);
    for (const r of rotated) expect(r.refresh_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
