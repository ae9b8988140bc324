// Issue 39: a reader resumes from the event log on any instance and after restarts, with no resync.
// Real service processes on one database: on PostgreSQL (the `postgres` project) two instances at
// once, then both restarted; on PGlite one instance restarted on its DATA_DIR.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayStreamEvent } from '../../src/client/relay-client.js';
import { usesPostgres } from '../support/app.js';
import { removeSharedDatabases, sharedDatabase as sharedDb } from '../support/shared-database.js';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';

const servers = new Set<ServerProcess>();
afterAll(async () => {
  for (const server of servers) await server.stop();
  await removeSharedDatabases();
}, 60_000);

const sharedDatabase = () => sharedDb('events');

async function start(database: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ ...database, EVENTS_HEARTBEAT_S: '1' }, { timeoutMs: 60_000 });
  servers.add(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  await server.stop();
  servers.delete(server);
}

const headers = { 'X-Internal-Token': SERVER_TOKEN, 'content-type': 'application/json' };

/** A room opened and closed on `server`: its router.closed is a durable event. */
async function openAndClose(server: ServerProcess, room: string): Promise<string> {
  const res = await fetch(`${server.url}/internal/v1/routers`, { method: 'POST', headers, body: JSON.stringify({ appData: { room } }) });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  expect((await fetch(`${server.url}/internal/v1/routers/${id}`, { method: 'DELETE', headers })).status).toBe(204);
  return id;
}

interface Frame {
  id: string;
  event: string;
  data: { type: string; id: string; routerId?: string; reason?: string; appData?: { room?: string } };
}

/**
 * Reads the stream of `server` from `lastEventId` (none: from now) until `enough` holds for the events
 * read, or 15 s; returns the events and the cursor a stream from now announced.
 */
async function read(server: ServerProcess, lastEventId: string | undefined, enough: (events: Frame[]) => boolean): Promise<{ events: Frame[]; cursor: string | undefined }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 15_000);
  const events: Frame[] = [];
  let cursor: string | undefined;
  try {
    const res = await fetch(`${server.url}/internal/v1/events`, { headers: { 'X-Internal-Token': SERVER_TOKEN, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) }, signal: controller.signal });
    expect(res.status).toBe(200);
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const cursorLine = /^: cursor (\S+)$/m.exec(block);
        if (cursorLine) cursor = cursorLine[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data === undefined) continue;
        events.push({ id: /^id: (.*)$/m.exec(block)![1]!, event: /^event: (.*)$/m.exec(block)![1]!, data: JSON.parse(data) as Frame['data'] });
      }
      if (enough(events)) break;
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return { events, cursor };
}

/** The cursor of a new stream: where a reader that saw nothing stands now. */
async function cursorOf(server: ServerProcess): Promise<string> {
  let cursor: string | undefined;
  const controller = new AbortController();
  const res = await fetch(`${server.url}/internal/v1/events`, { headers: { 'X-Internal-Token': SERVER_TOKEN }, signal: controller.signal });
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body!) {
    text += decoder.decode(chunk, { stream: true });
    cursor = /^: cursor (\S+)$/m.exec(text)?.[1];
    if (cursor) break;
  }
  controller.abort();
  return cursor!;
}

const closedRooms = (events: Frame[]) => events.filter((e) => e.data.type === 'router.closed').map((e) => e.data.appData?.room);

function expectInIdOrder(events: Frame[]): void {
  const ids = events.map((e) => BigInt(e.id));
  for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `id ${ids[i]} after ${ids[i - 1]}`).toBe(true);
  for (const e of events) expect(e.data.id).toBe(e.id);
}

describe('resuming from the event log (issue 39)', () => {
  // Two processes at once need PostgreSQL (a PGlite folder is one process's own): the postgres project.
  if (usesPostgres()) it('a reader on B resumes from an id of A’s stream: every durable event of A and B since, in id order, no resync; the same after both restart', { timeout: 240_000 }, async () => {
    const database = await sharedDatabase();
    let [a, b] = await Promise.all([start(database), start(database)]);
    const from = await cursorOf(a);
    const rooms = ['a-1', 'b-1', 'a-2', 'b-2'];
    for (const room of rooms) await openAndClose(room.startsWith('a') ? a : b, room);
    const onB = await read(b, from, (events) => closedRooms(events).length >= rooms.length);
    expect(onB.events.map((e) => e.event)).not.toContain('resync');
    // Each room once. Their order is the log's: relay events are stored in batches, so a room closed on B
    // after one on A may be stored first; the ids give that order, the same on every instance.
    const closedOrder = closedRooms(onB.events);
    expect([...closedOrder].sort()).toEqual([...rooms].sort());
    expectInIdOrder(onB.events);

    // The same ids on A (the log's order is one for every instance).
    const onA = await read(a, from, (events) => events.length >= onB.events.length);
    expect(onA.events.map((e) => e.id)).toEqual(onB.events.map((e) => e.id));

    await Promise.all([stop(a), stop(b)]);
    [a, b] = await Promise.all([start(database), start(database)]);
    await openAndClose(b, 'b-3');
    const afterRestart = await read(a, from, (events) => closedRooms(events).includes('b-3'));
    expect(afterRestart.events.map((e) => e.event)).not.toContain('resync');
    expect(closedRooms(afterRestart.events)).toEqual([...closedOrder, 'b-3']);
    expect(afterRestart.events.slice(0, onB.events.length).map((e) => e.id)).toEqual(onB.events.map((e) => e.id));
    expectInIdOrder(afterRestart.events);
  });

  // Two processes at once: PostgreSQL only.
  if (usesPostgres())
    it('the typed client fails over: A is SIGKILLed, it goes on with B from its last id, with no resync and nothing missed', { timeout: 240_000 }, async () => {
      const database = await sharedDatabase();
      const [a, b] = await Promise.all([start(database), start(database)]);
      const stop = new AbortController();
      const got: RelayStreamEvent[] = [];
      const relay = createRelayClient({ baseUrl: a.url, token: SERVER_TOKEN });
      const iterator = relay.events({ failoverBaseUrls: [b.url], signal: stop.signal });
      const reading = (async () => {
        for await (const event of { [Symbol.asyncIterator]: () => iterator }) got.push(event);
      })();
      const rooms = (): string[] => got.flatMap((e) => (e.type === 'router.closed' ? [String(e.appData.room)] : []));
      const until = async (what: () => boolean, label: string) => {
        const deadline = Date.now() + 20_000;
        while (!what() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(what(), label).toBe(true);
      };
      try {
        await until(() => iterator.lastEventId !== undefined, 'the stream joined');
        await openAndClose(a, 'on-a');
        await until(() => rooms().includes('on-a'), 'the event made on A');
        a.child.kill('SIGKILL');
        await a.exited;
        servers.delete(a);
        await openAndClose(b, 'on-b');
        await until(() => rooms().includes('on-b'), 'the event made on B, through the failover');
        expect(got.map((e) => e.type)).not.toContain('resync');
        expect(rooms()).toEqual(['on-a', 'on-b']);
        const ids = got.map((e) => BigInt(e.id));
        for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
      } finally {
        stop.abort();
        await reading;
      }
    });

  // Two processes at once: PostgreSQL only.
  if (usesPostgres())
    it('no skipped ids under concurrency: writers on two instances, a reader resuming at arbitrary ids on either gets exactly what was committed after each, in order, once', { timeout: 240_000 }, async () => {
      const database = await sharedDatabase();
      const nodes = await Promise.all([start(database), start(database)]);
      const from = await cursorOf(nodes[0]);
      const TARGET = 2_500;
      let produced = 0;
      const writersUntil = Date.now() + 60_000;
      const going = () => produced < TARGET && Date.now() < writersUntil;

      // Relay writers: a router and 0-4 transports, closed at once (one cascade: 1-5 events, batched by the appender).
      const relayWriter = async (server: ServerProcess) => {
        while (going()) {
          const router = await fetch(`${server.url}/internal/v1/routers`, { method: 'POST', headers, body: '{}' });
          expect(router.status).toBe(201);
          const { id } = (await router.json()) as { id: string };
          const transports = Math.floor(Math.random() * 5);
          for (let i = 0; i < transports; i++) {
            const res = await fetch(`${server.url}/internal/v1/transports`, { method: 'POST', headers, body: JSON.stringify({ routerId: id, direction: 'send' }) });
            expect(res.status).toBe(201);
          }
          expect((await fetch(`${server.url}/internal/v1/routers/${id}`, { method: 'DELETE', headers })).status).toBe(204);
          produced += 1 + transports;
        }
      };
      // Account writers: a ban (and its session end) and an unban, each committed with its change (the outbox).
      const register = async (server: ServerProcess, name: string): Promise<number> => {
        const res = await fetch(`${server.url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: name, email: `${name}@example.com`, password: 'event-resume-pw-1' }) });
        const reply = (await res.json()) as { code: number; data: { user: { id: number } } };
        expect(reply.code).toBe(0);
        return reply.data.user.id;
      };
      const accountWriter = async (server: ServerProcess, user: number) => {
        while (going()) {
          expect((await fetch(`${server.url}/internal/v1/users/${user}/ban`, { method: 'POST', headers, body: JSON.stringify({ reason: 'spam' }) })).status).toBe(200);
          expect((await fetch(`${server.url}/internal/v1/users/${user}/ban`, { method: 'DELETE', headers })).status).toBe(200);
          produced += 2;
        }
      };
      const users = await Promise.all(nodes.map((server, i) => register(server, `er_${i}_${Date.now().toString(36)}`)));

      // The reader: sessions on either instance, each resuming after an id picked at random among those seen.
      const seen: string[] = [from];
      const sessions: { after: string; ids: string[] }[] = [];
      let writing = true;
      const reader = (async () => {
        for (let turn = 0; writing && turn < 400; turn++) {
          const after = seen[Math.floor(Math.random() * seen.length)]!;
          const want = 20 + Math.floor(Math.random() * 200);
          const session = await read(nodes[turn % 2]!, after, (events) => events.length >= want || !writing);
          expect(session.events.map((e) => e.event)).not.toContain('resync');
          const ids = session.events.map((e) => e.id);
          sessions.push({ after, ids });
          seen.push(...ids);
        }
      })();
      await Promise.all([...nodes.flatMap((server) => [relayWriter(server), relayWriter(server), relayWriter(server)]), ...nodes.map((server, i) => accountWriter(server, users[i]!))]);
      writing = false;
      await reader;

      // The truth, from the table itself: every event committed after the first cursor. The writers' last
      // relay events may still be in an appender's batch (stored within its 50 ms interval plus the insert):
      // read until the table holds as many as were produced, for 10 s at most (a lost event fails below).
      const sql = postgres(database.DATABASE_URL!, { max: 1, onnotice: () => {} });
      const committedRows = () => sql<{ id: string }[]>`select id::text as id from event_log where event_log.id > ${Math.floor(Number(from) / 1_000_000)} order by event_log.id`;
      let rows = await committedRows();
      for (const deadline = Date.now() + 10_000; rows.length < produced && Date.now() < deadline; rows = await committedRows()) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await sql.end();
      const committed = rows.map((row) => String(BigInt(row.id) * 1_000_000n));
      expect(committed.length).toBeGreaterThanOrEqual(produced);
      expect(sessions.length).toBeGreaterThan(5);

      // Each session got exactly the committed events after its id, from the first one on, none twice, none skipped.
      for (const { after, ids } of sessions) {
        const expected = committed.filter((id) => BigInt(id) > BigInt(after)).slice(0, ids.length);
        expect(ids, `resumed after ${after}`).toEqual(expected);
      }
      // A last reader from the start gets them all.
      const all = await read(nodes[1], from, (events) => events.length >= committed.length);
      expect(all.events.map((e) => e.id)).toEqual(committed);
    });

  it('a reader resumes after a restart of the relay on the same database, with no resync; an id beyond the log answers resync', { timeout: 180_000 }, async () => {
    const database = await sharedDatabase();
    let server = await start(database);
    const from = await cursorOf(server);
    await openAndClose(server, 'before-1');
    await openAndClose(server, 'before-2');
    const before = await read(server, from, (events) => closedRooms(events).length >= 2);
    await stop(server);
    server = await start(database);
    await openAndClose(server, 'after-1');
    const resumed = await read(server, from, (events) => closedRooms(events).length >= 3);
    expect(resumed.events.map((e) => e.event)).not.toContain('resync');
    expect(closedRooms(resumed.events)).toEqual(['before-1', 'before-2', 'after-1']);
    expect(resumed.events.slice(0, before.events.length).map((e) => e.id)).toEqual(before.events.map((e) => e.id));
    expectInIdOrder(resumed.events);

    const future = await read(server, `${BigInt(resumed.events.at(-1)!.id) + 1_000_000_000n}`, (events) => events.length >= 1);
    expect(future.events[0]).toMatchObject({ event: 'resync', data: { reason: 'unknown_id' } });
  });

  it('a durable event a stream has shown survives a SIGKILL of the process: replayed after the restart', { timeout: 180_000 }, async () => {
    const database = await sharedDatabase();
    let server = await start(database);
    const from = await cursorOf(server);
    await openAndClose(server, 'before-kill');
    // Shown on a stream: stored (a stream gets durable events from the log only).
    const shown = await read(server, from, (events) => closedRooms(events).includes('before-kill'));
    server.child.kill('SIGKILL');
    await server.exited;
    servers.delete(server);
    server = await start(database);
    const resumed = await read(server, from, (events) => closedRooms(events).includes('before-kill'));
    expect(resumed.events.map((e) => e.event)).not.toContain('resync');
    expect(resumed.events.map((e) => e.id)).toEqual(shown.events.map((e) => e.id));
  });
});
