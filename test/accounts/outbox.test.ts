// Account events commit with the change they report (the transactional outbox): the statement that
// bans, ends a session or deletes an account also writes its events to the event log, so either both
// exist or neither. A trigger on event_log that refuses every insert (made on this file's own
// database) must make the change fail and leave nothing half done; without it, the log holds exactly
// the change's events, in one commit (consecutive ids), stamped with the service's clock, and the
// stream sends them with the ids the log gave. Real database: PGlite and PostgreSQL.
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { durableId } from '../../src/events/ids.js';
import { eventLog } from '../../src/events/log/schema.js';
import { formatTime } from '../../src/time.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { openStream, serveApp, type AppServer, type SseReader } from '../events/support.js';
import { APP_TIMEOUT, call, expectOk, register, type Registered } from './helpers.js';

/** The services' clock runs a day and a half behind the wall's: the events' times must come from it. */
const SKEW_MS = -36 * 60 * 60 * 1000;
const now = () => new Date(Date.now() + SKEW_MS);

let t: TestApp;
let server: AppServer;
let stream: SseReader;
const abort = new AbortController();

beforeAll(async () => {
  t = await buildTestApp({}, { now });
  server = await serveApp(t);
  const opened = await openStream(server.url, { query: '?types=auth.*', token: t.internalToken, signal: abort.signal });
  expect(opened.response.status).toBe(200);
  stream = opened.reader!;
}, APP_TIMEOUT);

afterEach(async () => {
  await refuseEvents(false);
});

afterAll(async () => {
  abort.abort();
  await server?.close();
  await t?.close();
}, APP_TIMEOUT);

/** Makes every insert into event_log fail (or no longer). */
async function refuseEvents(refuse: boolean): Promise<void> {
  const { db } = t.database;
  if (refuse) {
    await db.execute(sql.raw(`create or replace function outbox_test_refuse() returns trigger language plpgsql as $$ begin raise exception 'event log refuses (test)'; end $$`));
    await db.execute(sql.raw('create trigger outbox_test_refuse before insert on event_log for each row execute function outbox_test_refuse()'));
  } else {
    await db.execute(sql.raw('drop trigger if exists outbox_test_refuse on event_log'));
  }
}

async function internal(method: string, path: string, body?: unknown) {
  const res = await t.app.request(`/internal/v1${path}`, {
    method,
    headers: { 'X-Internal-Token': t.internalToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Whether the access token is still accepted (introspection). */
async function active(token: string): Promise<boolean> {
  const res = await t.app.request('/internal/v1/auth/introspect', {
    method: 'POST',
    headers: { 'X-Internal-Token': t.internalToken, 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return ((await res.json()) as { active: boolean }).active;
}

/** A user with two sessions: the registration's and a login's. */
async function userWithTwoSessions(): Promise<{ user: Registered; second: { token: string; refresh_token: string } }> {
  const user = await register(t.app);
  const login = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
  expectOk(login);
  return { user, second: login.body.data };
}

function sid(token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
}

async function lastLogId(): Promise<number> {
  const [row] = await t.database.db.select({ last: sql<string | null>`max(${eventLog.id})` }).from(eventLog);
  return Number(row?.last ?? 0);
}

async function loggedAfter(id: number): Promise<Array<{ id: number; type: string; payload: string; event: Record<string, unknown> }>> {
  const rows = await t.database.db.select().from(eventLog).where(sql`${eventLog.id} > ${id}`).orderBy(eventLog.id);
  return rows.map((row) => ({ id: Number(row.id), type: row.type, payload: row.payload, event: JSON.parse(row.payload) as Record<string, unknown> }));
}

/** The event's time came from the services' clock, between `before` and now. */
function expectServiceTime(time: unknown, before: Date): void {
  expect(typeof time).toBe('string');
  expect(time! >= formatTime(before) && time! <= formatTime(now())).toBe(true);
}

describe('both or neither', () => {
  it('a ban that cannot write its events fails and bans nobody; once it can, the log holds exactly its events in one commit, and the stream sends them', async () => {
    const { user, second } = await userWithTwoSessions();
    const before = await lastLogId();
    await refuseEvents(true);
    const refused = await internal('POST', `/users/${user.id}/ban`, { reason: 'abuse' });
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect((await internal('GET', `/users/${user.id}`)).body.ban).toBeNull();
    expect(await active(user.tokens.token)).toBe(true);
    expect(await active(second.token)).toBe(true);
    expectOk(await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: second.refresh_token } }));
    expect(await loggedAfter(before)).toEqual([]);

    await refuseEvents(false);
    const at = now();
    const banned = await internal('POST', `/users/${user.id}/ban`, { reason: 'abuse' });
    expect(banned.status).toBe(200);
    expect(await active(user.tokens.token)).toBe(false);
    const logged = await loggedAfter(before);
    expect(logged.map((row) => row.type)).toEqual(['auth.user.banned', 'auth.session.ended', 'auth.session.ended']);
    // One commit: the log gives a statement's ids in a row, under its commit lock.
    expect(logged.map((row) => row.id)).toEqual([logged[0]!.id, logged[0]!.id + 1, logged[0]!.id + 2]);
    // The text the bus would have stored for the same event (JSON.stringify: compact, members in order).
    for (const row of logged) expect(row.payload).toBe(JSON.stringify(row.event));
    const [ban, ...ended] = logged.map((row) => row.event);
    expect(Object.keys(ban!)).toEqual(['type', 'userId', 'until', 'reason', 'time']);
    expect(ban).toMatchObject({ type: 'auth.user.banned', userId: user.id, until: null, reason: 'abuse' });
    expectServiceTime(ban!.time, at);
    const sessionIds = [sid(user.tokens.token), sid(second.token)].sort();
    expect(ended.map((event) => event.sessionId).sort()).toEqual(sessionIds);
    for (const event of ended) {
      expect(Object.keys(event)).toEqual(['type', 'userId', 'sessionId', 'reason', 'time']);
      expect(event).toMatchObject({ type: 'auth.session.ended', userId: user.id, reason: 'banned', time: ban!.time });
    }

    // The stream sends them (the log's follower hands them over), with the ids the log gave.
    const ids = logged.map((row) => String(durableId(row.id)));
    await stream.until(() => ids.every((id) => stream.frames.some((frame) => frame.id === id)), 5_000, 'the ban on the stream');
    for (const row of logged) {
      const frame = stream.frames.find((f) => f.id === String(durableId(row.id)))!;
      expect(frame.event).toBe(row.type);
      expect(JSON.parse(frame.data)).toEqual({ id: String(durableId(row.id)), ...row.event });
    }
  });

  it('a logout or an account deletion that cannot write its events leaves the sessions and the account as they were', async () => {
    const { user, second } = await userWithTwoSessions();
    const before = await lastLogId();
    await refuseEvents(true);
    expect((await call(t.app, 'POST', '/logout', { token: user.tokens.token })).status).toBeGreaterThanOrEqual(500);
    expect(await active(user.tokens.token)).toBe(true);
    expect((await call(t.app, 'DELETE', `/sessions/${sid(user.tokens.token)}`, { token: second.token })).status).toBeGreaterThanOrEqual(500);
    expect(await active(user.tokens.token)).toBe(true);
    expect((await call(t.app, 'DELETE', '/account', { token: second.token, body: { password: user.password } })).status).toBeGreaterThanOrEqual(500);
    expect((await internal('GET', `/users/${user.id}`)).status).toBe(200);
    expect(await active(second.token)).toBe(true);
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }));
    expect(await loggedAfter(before)).toEqual([]);

    await refuseEvents(false);
    const at = now();
    expectOk(await call(t.app, 'POST', '/logout', { token: user.tokens.token }));
    const logout = await loggedAfter(before);
    expect(logout.map((row) => row.event)).toEqual([{ type: 'auth.session.ended', userId: user.id, sessionId: sid(user.tokens.token), reason: 'logout', time: logout[0]!.event.time }]);
    expectServiceTime(logout[0]!.event.time, at);

    const beforeDeletion = await lastLogId();
    expectOk(await call(t.app, 'DELETE', '/account', { token: second.token, body: { password: user.password } }));
    const deletion = await loggedAfter(beforeDeletion);
    // Every session left (the second and the login's above), then the user.
    expect(deletion.map((row) => row.type)).toEqual(['auth.session.ended', 'auth.session.ended', 'auth.user.deleted']);
    expect(deletion.map((row) => row.id)).toEqual([deletion[0]!.id, deletion[0]!.id + 1, deletion[0]!.id + 2]);
    expect(deletion.slice(0, 2).every((row) => row.event.reason === 'account_deleted' && row.event.userId === user.id)).toBe(true);
    expect(deletion.map((row) => row.event.sessionId)).toContain(sid(second.token));
    expect(deletion[2]!.event).toEqual({ type: 'auth.user.deleted', userId: user.id, time: deletion[2]!.event.time });
  });

  it('unban and the clearing of second factors write their events with the change, and nothing without it', async () => {
    const user = await register(t.app);
    expect((await internal('POST', `/users/${user.id}/ban`, {})).status).toBe(200);
    const before = await lastLogId();
    await refuseEvents(true);
    expect((await internal('DELETE', `/users/${user.id}/ban`)).status).toBeGreaterThanOrEqual(500);
    expect((await internal('GET', `/users/${user.id}`)).body.ban).not.toBeNull();
    expect((await internal('DELETE', `/users/${user.id}/mfa`)).status).toBeGreaterThanOrEqual(500);
    expect(await loggedAfter(before)).toEqual([]);

    await refuseEvents(false);
    expect((await internal('DELETE', `/users/${user.id}/ban`)).status).toBe(200);
    // A user who is not banned: no event.
    expect((await internal('DELETE', `/users/${user.id}/ban`)).status).toBe(200);
    expect((await internal('DELETE', `/users/${user.id}/mfa`)).status).toBe(200);
    const logged = (await loggedAfter(before)).map((row) => row.event);
    expect(logged).toEqual([
      { type: 'auth.user.unbanned', userId: user.id, time: logged[0]!.time },
      { type: 'auth.user.mfa_cleared', userId: user.id, passkeys: 0, totp: false, time: logged[1]!.time },
    ]);
  });
});
