// The audit trail (issue 16): a row for each event type, never a secret; GET /internal/v1/auth-events
// behind the internal token with filters and cursor pages; pruning after AUTH_EVENTS_RETENTION_DAYS.
import { connect, type AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { eq, lt } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { authEventsPage } from '../../src/accounts/audit/contract.js';
import { authEvents } from '../../src/db/schema.js';
import { codeOf } from '../support/smtp.js';
import { call, expectError, expectOk, register, TIME_FORMAT, useMailingApp } from './helpers.js';
import { appWith } from '../support/app.js';

// No refresh grace period: the second presentation of a rotated token below must count as reuse.
const { t, smtp, clock } = useMailingApp({ TRUST_PROXY: 'xff', AUTH_EVENTS_RETENTION_DAYS: '30', REFRESH_REUSE_GRACE_S: '0' });

/** A page of the trail as the contract types it. */
type EventsPage = z.output<typeof authEventsPage>;

async function events(query: string, token: string | null = t.internalToken) {
  const res = await t.app.request(`/internal/v1/auth-events${query}`, { headers: token === null ? {} : { 'X-Internal-Token': token } });
  return { status: res.status, body: (await res.json()) as EventsPage & { code?: string; details?: unknown } };
}

const headers = { 'user-agent': 'AuditAgent/1.0', 'x-forwarded-for': '192.0.2.44' };

describe('auth_events', () => {
  it('records every event type with time, address and user agent, and never a secret', async () => {
    const password = 'Audit-secret-1';
    const user = await register(t.app, { password });
    const api = (method: string, path: string, body?: unknown, token?: string) => call(t.app, method, path, { headers, ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });
    const secrets: string[] = [password];
    const keep = (set: { token: string; refresh_token: string }) => secrets.push(set.token, set.refresh_token, set.token.split('.')[1]!, set.refresh_token.split('.')[1]!);
    keep(user.tokens);

    const login = (await api('POST', '/login', { account: user.username.toUpperCase(), password })).body.data;
    keep(login);
    expect((await api('POST', '/login', { account: user.username, password: 'Wrong-secret-2' })).body.code).toBe(2003);
    secrets.push('Wrong-secret-2');
    expect((await api('POST', '/login', { account: 'Nobody_Here@Example.com', password: 'Wrong-secret-3' })).body.code).toBe(2004);
    const rotated = (await api('POST', '/refresh-token', { refresh_token: login.refresh_token })).body.data;
    keep(rotated);
    expect((await api('POST', '/refresh-token', { refresh_token: login.refresh_token })).body.code).toBe(1002);
    const third = (await api('POST', '/login', { account: user.email, password })).body.data;
    keep(third);
    expectOk(await api('PUT', '/password', { old_password: password, new_password: 'Audit-secret-4' }, user.tokens.token));
    secrets.push('Audit-secret-4');
    expectOk(await api('POST', '/password/forgot', { email: user.email }));
    const code = codeOf(await smtp.waitFor((m) => m.to.includes(user.email) && m.subject.includes('reset code')));
    secrets.push(code);
    expectOk(await api('POST', '/password/reset', { email: user.email, code, new_password: 'Audit-secret-5' }));
    secrets.push('Audit-secret-5');
    const last = (await api('POST', '/login', { account: user.username, password: 'Audit-secret-5' })).body.data;
    keep(last);
    expectOk(await api('POST', '/logout', undefined, last.token));

    const { status, body } = await events(`?userId=${user.id}&limit=200`);
    expect(status).toBe(200);
    const mine = body.events;
    const types = new Set(mine.map((e) => e.type));
    for (const type of ['registered', 'login_succeeded', 'login_failed', 'refresh_reuse_detected', 'session_ended', 'password_changed', 'password_reset_requested', 'password_reset']) {
      expect(types, type).toContain(type);
    }
    const ended = mine.filter((e) => e.type === 'session_ended').map((e) => e.detail);
    expect(ended).toEqual(expect.arrayContaining(['user', 'refresh_reuse', 'password_change', 'password_reset']));
    const failed = mine.find((e) => e.type === 'login_failed')!;
    expect(failed).toMatchObject({ account: user.username.toLowerCase(), detail: 'wrong_password', ip: '192.0.2.44', user_agent: 'AuditAgent/1.0' });
    expect(failed.time).toMatch(TIME_FORMAT);
    const ok = mine.find((e) => e.type === 'login_succeeded' && e.account === user.username.toLowerCase())!;
    expect(ok.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.detail).toBe('password'); // how the session signed in
    // The unknown account, normalised, without a user.
    const unknown = (await events('?type=login_failed&limit=200')).body.events.find((e) => e.account === 'nobody_here@example.com');
    expect(unknown).toMatchObject({ user_id: null, detail: 'no_such_account' });

    const everything = JSON.stringify(await t.database.db.select().from(authEvents));
    for (const secret of secrets) expect(everything, `secret ${secret.slice(0, 4)}… in auth_events`).not.toContain(secret);

    // account_deleted, last.
    const fresh = await register(t.app);
    expectOk(await call(t.app, 'DELETE', '/account', { token: fresh.tokens.token, body: { password: fresh.password } }));
    const deleted = await events(`?userId=${fresh.id}&type=account_deleted`);
    expect(deleted.body.events).toHaveLength(1);
    expect(deleted.body.events[0]).toMatchObject({ account: null, ip: null, user_agent: null });
  });

  it('records failed reset codes, failed password changes and failed account deletions (issue 32 #12)', async () => {
    const user = await register(t.app);
    const api = (method: string, path: string, body: unknown, token?: string) => call(t.app, method, path, { headers, body, ...(token ? { token } : {}) });
    expectOk(await api('POST', '/password/forgot', { email: user.email }));
    const code = codeOf(await smtp.waitFor((m) => m.to.includes(user.email) && m.subject.includes('reset code')));
    const wrong = code === '000000' ? '000001' : '000000';
    expect((await api('POST', '/password/reset', { email: user.email, code: wrong, new_password: 'Audit-secret-6' })).body.code).toBe(2005);
    const unknownEmail = `Nobody_${Date.now()}@Example.com`;
    expect((await api('POST', '/password/reset', { email: unknownEmail, code: wrong, new_password: 'Audit-secret-6' })).body.code).toBe(2005);
    expect((await api('PUT', '/password', { old_password: 'Not-my-password-1', new_password: 'Audit-secret-7' }, user.tokens.token)).body.code).toBe(2003);
    expect((await api('DELETE', '/account', { password: 'Not-my-password-2' }, user.tokens.token)).body.code).toBe(2003);

    const mine = (await events(`?userId=${user.id}&limit=200`)).body.events;
    expect(mine.find((e) => e.type === 'password_reset_failed')).toMatchObject({ detail: 'wrong_code', ip: '192.0.2.44', user_agent: 'AuditAgent/1.0' });
    expect(mine.find((e) => e.type === 'password_change_failed')).toMatchObject({ detail: 'wrong_old_password', ip: '192.0.2.44', user_agent: 'AuditAgent/1.0' });
    expect(mine.find((e) => e.type === 'account_deletion_failed')).toMatchObject({ detail: 'wrong_password', ip: '192.0.2.44', user_agent: 'AuditAgent/1.0' });
    const byType = await events('?type=password_reset_failed&limit=200');
    expect(byType.status).toBe(200);
    expect(byType.body.events.find((e) => e.account === unknownEmail.toLowerCase())).toMatchObject({ user_id: null, detail: 'unknown_email' });
    // No secret in them: not the code tried, not the passwords.
    const text = JSON.stringify(await t.database.db.select().from(authEvents));
    for (const secret of ['Not-my-password-1', 'Not-my-password-2', 'Audit-secret-6', 'Audit-secret-7']) expect(text).not.toContain(secret);
    for (const row of await t.database.db.select().from(authEvents)) expect(row.detail).not.toBe(wrong);
    // The reset and the account still work.
    expectOk(await api('POST', '/password/reset', { email: user.email, code, new_password: 'Audit-secret-8' }));
  });

  it('writes no row for attempts refused before any check, so a flood of failures stays bounded (issue 32 #12)', async () => {
    // This app's budgets: 2 failed password checks per account, 3 wrong codes per client address.
    const bounded = appWith(t, { config: { ...t.config, auth: { ...t.config.auth, failuresPerAccount: 2 }, passwordReset: { requestsPerSource: 10, guessesPerSource: 3 } } });
    const user = await register(bounded);
    const from = { 'x-forwarded-for': '192.0.2.91' };
    const attempts = async (method: string, path: string, body: unknown, token?: string) => {
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) codes.push((await call(bounded, method, path, { headers: from, body, ...(token ? { token } : {}) })).body.code);
      return codes;
    };
    expect(await attempts('PUT', '/password', { old_password: 'Not-my-password-1', new_password: 'Audit-secret-9' }, user.tokens.token)).toEqual([2003, 2003, ...Array<number>(6).fill(1003)]);
    expect(await attempts('POST', '/password/reset', { email: user.email, code: '123456', new_password: 'Audit-secret-9' })).toEqual([2005, 2005, 2005, ...Array<number>(5).fill(1003)]);
    const rows = await t.database.db.select().from(authEvents).where(eq(authEvents.userId, user.id));
    expect(rows.filter((r) => r.type === 'password_change_failed')).toHaveLength(2);
    expect(rows.filter((r) => r.type === 'password_reset_failed')).toHaveLength(3);
  });

  it('pages newest first with an opaque cursor and filters by type and since', async () => {
    const user = await register(t.app);
    for (let i = 0; i < 5; i++) await call(t.app, 'POST', '/login', { body: { account: user.username, password: 'Wrong-pw-x' } });
    const seen: number[] = [];
    let cursor: string | null = '';
    for (let page = 0; page < 10 && cursor !== null; page++) {
      const r = await events(`?userId=${user.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.events.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.events.map((e) => e.id));
      cursor = r.body.next_cursor;
    }
    expect(cursor).toBeNull();
    // registered and 5 failed logins, each once, newest first.
    expect(seen).toHaveLength(6);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
  });

  it('refuses bad queries with VALIDATION_ERROR and a missing token with 401', async () => {
    expect((await events('', null)).status).toBe(401);
    expect((await events('', 'wrong')).status).toBe(401);
    for (const q of ['?limit=0', '?limit=201', '?limit=abc', '?userId=0', '?userId=-1', '?userId=99999999999', '?type=bogus', '?since=yesterday', '?since=2025-13-01%2000:00:00', '?cursor=%%%', '?cursor=ZZZZ', '?other=1', '?type=login_failed&type=registered', `?cursor=${'a'.repeat(100)}`]) {
      const r = await events(q);
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses a since outside 1970-9999 (UTC) with 400 naming since, on either database', async () => {
    // Years 0000 and 10000 (reached through an offset) were handed to the database and answered 500.
    const outside = ['0000-01-01 00:00:00', '0000-01-01T00:00:00Z', '0001-01-01T00:00:00+08:00', '1969-12-31T23:59:59Z', '1970-01-01 07:59:59', '9999-12-31T23:59:59-08:00', '9999-12-31T23:59:59.999-00:01'];
    for (const since of outside) {
      const r = await events(`?since=${encodeURIComponent(since)}`);
      expect(r.status, since).toBe(400);
      expect(r.body.code, since).toBe('VALIDATION_ERROR');
      expect(r.body.details, since).toEqual({ issues: [{ path: 'since', message: expect.stringContaining('1970') }] });
    }
    // The bounds themselves are accepted and reach the database.
    for (const since of ['1970-01-01T00:00:00Z', '1970-01-01 08:00:00', '9999-12-31T23:59:59.999Z', '9999-12-31 23:59:59', '9999-12-31T23:59:59+00:00']) {
      const r = await events(`?since=${encodeURIComponent(since)}&limit=1`);
      expect(r.status, since).toBe(200);
    }
  });

  it('accepts since as Asia/Shanghai yyyy-MM-dd HH:mm:ss or ISO 8601', async () => {
    const user = await register(t.app);
    const later = await events(`?userId=${user.id}&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(later.body.events).toHaveLength(0);
    const earlier = await events(`?userId=${user.id}&since=${encodeURIComponent('2020-01-01 08:00:00')}`);
    expect(earlier.body.events.length).toBeGreaterThan(0);
  });

  it(`prunes rows older than AUTH_EVENTS_RETENTION_DAYS (30 here) on a later write, and never lists them`, async () => {
    clock.offsetMs = -40 * 86_400_000;
    const old = await register(t.app);
    clock.offsetMs = 0;
    // Not listed even before pruning.
    expect((await events(`?userId=${old.id}`)).body.events).toHaveLength(0);
    expect((await t.database.db.select().from(authEvents).where(eq(authEvents.userId, old.id))).length).toBeGreaterThan(0);
    // Pruning runs on a write at most once an hour: an hour later, the next event prunes.
    clock.offsetMs = 3600_000 + 1000;
    await register(t.app);
    const deadline = Date.now() + 5000;
    let left = -1;
    while (Date.now() < deadline && left !== 0) {
      left = (await t.database.db.select().from(authEvents).where(eq(authEvents.userId, old.id))).length;
      if (left !== 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(left).toBe(0);
    const cutoff = new Date(Date.now() + clock.offsetMs - 30 * 86_400_000);
    expect(await t.database.db.select().from(authEvents).where(lt(authEvents.occurredAt, cutoff))).toHaveLength(0);
  });
});

describe('control characters (issue 32 #15)', () => {
  /** C0 and C1 controls, DEL, and the bidi formatting characters: never in what the trail serves. */
  const CONTROL = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u; // \p{Cc}: U+0000-001F, U+007F-009F

  async function sessionsOf(token: string) {
    return (await call(t.app, 'GET', '/sessions', { token })).body.data as { device: string | null; ip: string | null }[];
  }

  it('refuses control characters in identifiers with 1001 naming the field, and a refused login writes no audit row', async () => {
    const user = await register(t.app);
    for (const account of ['\u001b[31mroot', `${user.username}\u001b[0m`, `${user.username}\r\n`, 'a\tb', 'a\u0007b', 'a\u007fb', 'a\u0085b', 'a\u009bb', '\u202eadmin', 'ad\u2066min']) {
      const reply = await call(t.app, 'POST', '/login', { body: { account, password: 'Wrong-pw-1' } });
      expectError(reply, 400, 1001);
      expect(reply.body.message, JSON.stringify(account)).toContain('account');
    }
    const trail = (await events('?type=login_failed&limit=200')).body.events;
    expect(trail.filter((e) => CONTROL.test(e.account ?? ''))).toEqual([]);
    const rows = await t.database.db.select().from(authEvents);
    expect(rows.filter((r) => CONTROL.test(r.account ?? ''))).toEqual([]);
    // The other identifiers: register's username and e-mail, forgot's and reset's e-mail.
    const fresh = `u_${Date.now().toString(36)}`;
    expectError(await call(t.app, 'POST', '/register', { body: { username: `${fresh}\u001b`, email: `${fresh}@example.com`, password: 'Secret-pw-9' } }), 400, 1001);
    expectError(await call(t.app, 'POST', '/register', { body: { username: fresh, email: `${fresh}\u001b@example.com`, password: 'Secret-pw-9' } }), 400, 1001);
    expectError(await call(t.app, 'POST', '/password/forgot', { body: { email: `${user.email}\u001b[31m` } }), 400, 1001);
    expectError(await call(t.app, 'POST', '/password/reset', { body: { email: `\u202e${user.email}`, code: '123456', new_password: 'Secret-pw-9' } }), 400, 1001);
  });

  it('stores a User-Agent without its control and bidi characters (app.request): GET /sessions and the trail show it clean', async () => {
    const agent = 'Evil\u001b[31mAgent\u0007/1.0\u007f (\u0085X11;\u009b Linux)\tend';
    const user = await register(t.app);
    const login = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password }, headers: { 'user-agent': agent } });
    expectOk(login);
    const devices = await sessionsOf(login.body.data.token);
    const device = devices.find((d) => d.device?.startsWith('Evil'))?.device;
    // Breaks (tab, NEL) become a space; the other controls go.
    expect(device).toBe('Evil[31mAgent/1.0 ( X11; Linux) end');
    const trail = (await events(`?userId=${user.id}&type=login_succeeded`)).body.events;
    expect(trail.map((e) => e.user_agent)).toEqual(['Evil[31mAgent/1.0 ( X11; Linux) end']);
    // Nothing but controls: no label at all.
    const blank = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password }, headers: { 'user-agent': '\u001b\u0007\u009b' } });
    expectOk(blank);
    expect((await sessionsOf(blank.body.data.token)).filter((d) => d.device !== null && CONTROL.test(d.device))).toEqual([]);
  });

  it('over a real socket: C1 controls and a UTF-8 bidi override in the User-Agent are not stored, CR/LF and ESC never get past the HTTP parser', async () => {
    const user = await register(t.app);
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ account: user.username, password: user.password });
      /** One raw HTTP/1.1 login with this User-Agent value (bytes as given); the status and body back. */
      const rawLogin = (agent: Buffer) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1');
          const chunks: Buffer[] = [];
          socket.on('data', (d) => chunks.push(d));
          socket.on('error', reject);
          socket.on('close', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
          });
          socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
          socket.write(
            Buffer.concat([
              Buffer.from(`POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nUser-Agent: `),
              agent,
              Buffer.from(`\r\n\r\n${body}`),
            ]),
          );
        });
      // 0x9b (CSI) and 0x85 (NEL) are C1 controls as Node reads header bytes (latin1); E2 80 AE is U+202E in UTF-8.
      const agent = Buffer.concat([Buffer.from('Sock'), Buffer.from([0x9b]), Buffer.from('31mAgent'), Buffer.from([0x85]), Buffer.from('/2.0 '), Buffer.from('\u202eevil', 'utf8'), Buffer.from('\tx café', 'utf8')]);
      const ok = await rawLogin(agent);
      expect(ok.status).toBe(200);
      const token = (JSON.parse(ok.body) as { data: { token: string } }).data.token;
      const device = (await sessionsOf(token)).find((d) => d.device?.startsWith('Sock'))?.device;
      // Printable text is kept, UTF-8 included.
      expect(device).toBe('Sock31mAgent /2.0 evil x café');
      const trail = (await events(`?userId=${user.id}&type=login_succeeded`)).body.events;
      expect(trail.map((e) => e.user_agent)).toEqual(['Sock31mAgent /2.0 evil x café']);
      // Node's parser refuses these before the app: 400, and no login happened.
      for (const bad of [Buffer.from('A\rB'), Buffer.from('A\nB'), Buffer.from('A\u001b[31mB')]) {
        expect((await rawLogin(bad)).status, JSON.stringify(bad.toString('latin1'))).toBe(400);
      }
      expect((await events(`?userId=${user.id}&type=login_succeeded`)).body.events).toHaveLength(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
