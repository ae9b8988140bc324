// The webhook delivers durable events from the event log (issue 39), as real processes with real kills.
// - Crash between commit and delivery (PGlite with its data folder, and PostgreSQL): a process bans a
//   user and closes a router while the receiver holds its answer; it is SIGKILLed; a new process on
//   the same database delivers exactly the events those made (duplicates allowed, none missing).
// - The lease (PostgreSQL): two processes, one webhook URL: no event posted by both while both live;
//   the delivering one SIGKILLed, the other takes over within 15 s and every event arrives.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/client/relay-client.js';
import { usesPostgres } from '../support/app.js';
import { removeSharedDatabases, sharedDatabase as sharedDb } from '../support/shared-database.js';
import { OwnRedis } from '../support/redis-server.js';
import { freePort, SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';
import { eventually, openStream, type SseReader } from '../events/support.js';
import { Receiver } from '../events/webhook-receiver.js';

const SECRET = 'webhook-log-secret-0123456789abcdef0123';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await removeSharedDatabases();
}, 60_000);
const sharedDatabase = () => sharedDb('webhook_log');

async function startReceiver(): Promise<Receiver> {
  const receiver = await new Receiver().start();
  cleanups.push(() => receiver.stop());
  return receiver;
}

async function start(env: Record<string, string>, receiver: Receiver, port?: number): Promise<ServerProcess> {
  const server = await startServer({ ...env, EVENTS_WEBHOOK_URL: receiver.url, EVENTS_WEBHOOK_SECRET: SECRET, EVENTS_HEARTBEAT_S: '1' }, { timeoutMs: 90_000, ...(port === undefined ? {} : { port }) });
  cleanups.push(() => server.stop());
  return server;
}

async function kill(server: ServerProcess): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

/** How many times the receiver accepted each event id (signatures checked). */
function acceptedIds(receiver: Receiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const delivery of receiver.deliveries) {
    if (delivery.status < 200 || delivery.status >= 300) continue;
    for (const event of verifyWebhook(delivery.raw, delivery.headers, SECRET).events) counts.set(event.id, (counts.get(event.id) ?? 0) + 1);
  }
  return counts;
}

async function internal(server: ServerProcess, method: string, route: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/internal${route}`, {
    method,
    headers: { 'X-Internal-Token': SERVER_TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A user with a live session, banned: auth.session.ended and auth.user.banned, committed with the ban. */
async function banUser(server: ServerProcess): Promise<void> {
  const username = `wl_${randomBytes(5).toString('hex')}`;
  const res = await fetch(`${server.url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, email: `${username}@example.com`, password: 'webhook-log-pw-1' }),
  });
  const reply = (await res.json()) as { code: number; data: { user: { id: number } } };
  expect(reply.code).toBe(0);
  expect((await internal(server, 'POST', `/v1/users/${reply.data.user.id}/ban`, { reason: 'spam' })).status).toBe(200);
}

/** A router created and closed: router.closed, appended by the relay. */
async function closeRouter(server: ServerProcess): Promise<void> {
  const created = await internal(server, 'POST', '/v1/routers', {});
  expect(created.status).toBe(201);
  expect((await internal(server, 'DELETE', `/v1/routers/${String(created.body.id)}`)).status).toBe(204);
}

async function stream(server: ServerProcess): Promise<SseReader> {
  const abort = new AbortController();
  cleanups.push(() => Promise.resolve(abort.abort()));
  const { reader } = await openStream(server.url, { token: SERVER_TOKEN, signal: abort.signal });
  return reader!;
}

describe('the webhook delivers from the event log', () => {
  it('crash between commit and delivery: a new process on the same database delivers exactly the events made before the kill', { timeout: 180_000 }, async () => {
    const database = await sharedDatabase();
    const receiver = await startReceiver();
    receiver.answer = () => 'hang';
    const a = await start(database, receiver);
    const reader = await stream(a);
    await banUser(a);
    await closeRouter(a);
    await reader.until(() => reader.events().some((e) => e.type === 'router.closed') && reader.events().some((e) => e.type === 'auth.user.banned'), 10_000, 'the events on the stream');
    const made = reader.frames.map((frame) => frame.id!);
    expect(reader.events().map((e) => e.type)).toEqual(expect.arrayContaining(['auth.session.ended', 'auth.user.banned', 'router.closed']));
    // The receiver holds a POST of them when the process dies.
    await eventually(() => receiver.deliveries.length > 0, 10_000, 'a POST in flight');
    await kill(a);
    expect(acceptedIds(receiver).size).toBe(0);

    receiver.answer = () => 204;
    const b = await start(database, receiver);
    // PostgreSQL: B takes the lease once A's expires (10 s); PGlite: the folder is B's alone, at once.
    await eventually(() => made.every((id) => acceptedIds(receiver).has(id)), 30_000, 'every event made before the kill');
    // Exactly those, beside what the start made before the stream opened (worker.* events).
    const firstMade = made.map(BigInt).reduce((a, b) => (a < b ? a : b));
    expect([...acceptedIds(receiver).keys()].filter((id) => !made.includes(id) && BigInt(id) > firstMade)).toEqual([]);
    await b.stop();
  });

  it.runIf(usesPostgres())('lease: two processes, one delivers; killed, the other takes over within 15 s and nothing is lost', { timeout: 180_000 }, async () => {
    const database = await sharedDatabase();
    const receiver = await startReceiver();
    const a = await start(database, receiver);
    const b = await start(database, receiver);
    const reader = await stream(b);
    const work = async (n: number) => {
      for (let i = 0; i < n; i++) await closeRouter(i % 2 === 0 ? a : b);
    };
    await work(20);
    await reader.until(() => reader.frames.length >= 20, 10_000, '20 router.closed');
    const first = reader.frames.map((frame) => frame.id!);
    await eventually(() => first.every((id) => acceptedIds(receiver).has(id)), 10_000, 'the first events');
    // The normal case: each event posted once, by one of them.
    expect([...acceptedIds(receiver).values()].every((count) => count === 1)).toBe(true);

    // Which one delivers: its metric says so.
    const holds = async (server: ServerProcess) => /^events_webhook_lease_held 1$/m.test(await (await fetch(`${server.url}/internal/metrics`, { headers: { 'X-Internal-Token': SERVER_TOKEN } })).text());
    const [holderA, holderB] = [await holds(a), await holds(b)];
    expect(holderA !== holderB).toBe(true);
    const [holder, other] = holderA ? [a, b] : [b, a];
    // Events made on the survivor while the holder dies, and after.
    const otherReader = holder === b ? await stream(a) : reader;
    const before = otherReader.frames.length;
    await kill(holder);
    const killedAt = Date.now();
    for (let i = 0; i < 5; i++) await closeRouter(other);
    await otherReader.until(() => otherReader.frames.length >= before + 5, 10_000, 'the events after the kill');
    const all = [...new Set([...first, ...otherReader.frames.map((frame) => frame.id!)])];
    await eventually(() => all.every((id) => acceptedIds(receiver).has(id)), 20_000, 'every event after the kill');
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    await other.stop();
  });

  it.runIf(usesPostgres() && !skipWithout(REDIS_SERVER))('a relay cluster on one database: each node streams both nodes\' events, and the cluster posts each event once', { timeout: 180_000 }, async () => {
    const database = await sharedDatabase();
    const receiver = await startReceiver();
    const redis = new OwnRedis(await freePort());
    await redis.start();
    cleanups.push(() => redis.kill());
    const node = async (id: string) => {
      const port = await freePort();
      return start({ ...database, REDIS_URL: redis.url, CLUSTER_NODE_ID: id, CLUSTER_NODE_URL: `http://127.0.0.1:${port}` }, receiver, port);
    };
    const [a, b] = [await node('node-a'), await node('node-b')];
    await eventually(async () => ((await internal(a, 'GET', '/v1/cluster')).body.nodes as unknown[]).length === 2 && ((await internal(b, 'GET', '/v1/cluster')).body.nodes as unknown[]).length === 2, 10_000, 'two nodes in each view');
    const readers = [await stream(a), await stream(b)];
    // Ten rooms made on each node itself (a forwarded call is answered where it lands), each closed through the other node.
    for (let i = 0; i < 20; i++) {
      const [maker, closer] = i % 2 === 0 ? [a, b] : [b, a];
      const res = await fetch(`${maker.url}/internal/v1/routers`, { method: 'POST', headers: { 'X-Internal-Token': SERVER_TOKEN, 'content-type': 'application/json', 'X-Cluster-Forwarded-By': 'test' }, body: '{}' });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      expect((await internal(closer, 'DELETE', `/v1/routers/${id}`)).status).toBe(204);
    }
    const closed = (reader: SseReader) => reader.frames.filter((frame) => frame.event === 'router.closed');
    for (const reader of readers) await reader.until(() => closed(reader).length >= 20, 10_000, "both nodes' 20 router.closed");
    // The same durable events on both streams, with the same ids, from both nodes.
    const ids = readers.map((reader) => closed(reader).map((frame) => frame.id!));
    expect(ids[1]).toEqual(ids[0]);
    const nodeIds = closed(readers[0]!).map((frame) => (JSON.parse(frame.data) as { nodeId: string }).nodeId);
    expect(nodeIds.filter((id) => id === 'node-a')).toHaveLength(10);
    expect(nodeIds.filter((id) => id === 'node-b')).toHaveLength(10);
    // Posted by the cluster once each: one delivery stream over the shared log, not one per node.
    await eventually(() => ids[0]!.every((id) => acceptedIds(receiver).has(id)), 20_000, 'every router.closed posted');
    const counts = acceptedIds(receiver);
    expect(ids[0]!.map((id) => counts.get(id))).toEqual(ids[0]!.map(() => 1));
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    await Promise.all([a.stop(), b.stop()]);
  });
});
