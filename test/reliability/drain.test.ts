// Drain on SIGTERM against the real server process, with real workers and real media (werift peers
// over UDP on loopback): /readyz turns 503 at once, new routers are refused with DRAINING, the open
// room keeps forwarding, the event stream says relay.draining; the process exits 0 once the last
// router closed, or after DRAIN_TIMEOUT_S with router.closed `shutdown` for the rooms left.
import { afterEach, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient, type RelayStreamEvent } from '../../src/client/relay-client.js';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { OPUS, RecvPeer, SendPeer } from '../support/webrtc/peer.js';
import { receiverRtpCapabilities } from '../support/webrtc/sdp.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

/** SIGTERM to /readyz 503, beyond what one /readyz round trip takes on this machine now. */
const READY_FLIP_MS = 100;

const servers: ServerProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const server of servers.splice(0)) await server.stop(1000);
});

async function info(server: ServerProcess): Promise<any> {
  return fetch(`${server.url}/internal/info`, { headers: { 'X-Internal-Token': SERVER_TOKEN } }).then((r) => r.json());
}

async function serverWithEvents(env: Record<string, string>) {
  const server = await startServer(env);
  servers.push(server);
  const relay = createRelayClient({ baseUrl: server.url, token: SERVER_TOKEN });
  const abort = new AbortController();
  cleanups.push(() => abort.abort());
  const events: RelayStreamEvent[] = [];
  void (async () => {
    try {
      for await (const event of relay.events({ signal: abort.signal })) events.push(event);
    } catch {
      // the process went away
    }
  })();
  // The stream is open once the relay counts it.
  await waitFor(async () => (await info(server)).events.streams === 1, {
    timeoutMs: 10_000,
    what: 'the event stream to open',
  });
  return { server, relay, events };
}

async function readyStatus(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status;
}

/** A room with audio flowing from a sender to a receiver; returns the consumer and the receiver. */
async function roomWithMedia(relay: RelayClient) {
  const router = await relay.createRouter();
  const sendTransport = await relay.createTransport({ routerId: router.id, direction: 'send' });
  const sender = await SendPeer.create(sendTransport);
  cleanups.push(() => sender.close().catch(() => {}));
  await relay.connectTransport(sendTransport.id, sender.dtlsParameters);
  await sender.connected();
  const producer = await relay.createProducer({ transportId: sendTransport.id, kind: 'audio', rtpParameters: sender.rtpParameters.audio });
  sender.start();
  const recvTransport = await relay.createTransport({ routerId: router.id, direction: 'recv' });
  const consumer = await relay.createConsumer({ transportId: recvTransport.id, producerId: producer.id, rtpCapabilities: receiverRtpCapabilities(router.rtpCapabilities, [OPUS]) });
  const receiver = await RecvPeer.create(recvTransport, [consumer]);
  cleanups.push(() => receiver.close().catch(() => {}));
  await relay.connectTransport(recvTransport.id, receiver.dtlsParameters);
  await receiver.connected();
  await relay.resumeConsumer(consumer.id);
  await waitFor(() => receiver.count(consumer.id) >= 20, { timeoutMs: 10_000, what: '20 audio packets before the drain' });
  return { router, consumer, receiver, sender };
}

describe('SIGTERM drains before it shuts down', () => {
  it('keeps the open room forwarding, refuses new rooms, and exits 0 once the last router closed', { timeout: 60_000 }, async () => {
    const { server, relay, events } = await serverWithEvents({ DRAIN_TIMEOUT_S: '30' });
    const { router, consumer, receiver } = await roomWithMedia(relay);

    // Baseline: the slowest of a few /readyz round trips right now (the machine is shared).
    let baselineMs = 0;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect(await readyStatus(server)).toBe(200);
      baselineMs = Math.max(baselineMs, performance.now() - started);
    }

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    let flippedAfterMs = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 200; i++) {
      if ((await readyStatus(server)) === 503) {
        flippedAfterMs = performance.now() - signalled;
        break;
      }
    }
    if (process.env.DRAIN_FIGURES) console.log(`/readyz 503 after ${flippedAfterMs.toFixed(1)} ms (baseline round trip ${baselineMs.toFixed(1)} ms)`);
    expect(flippedAfterMs).toBeLessThan(READY_FLIP_MS + baselineMs);

    await expect(relay.createRouter()).rejects.toMatchObject({ status: 503, code: 'DRAINING' });
    // The account API still answers (a validation error, not a refusal).
    const login = await fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(login.status).toBe(400);

    // The open room keeps forwarding while the drain waits for it.
    const before = receiver.count(consumer.id);
    await sleep(1000);
    const during1s = receiver.count(consumer.id) - before;
    if (process.env.DRAIN_FIGURES) console.log(`packets received in 1 s of drain: ${during1s}`);
    expect(during1s).toBeGreaterThan(25);
    await waitFor(() => events.some((e) => e.type === 'relay.draining'), { timeoutMs: 3000, what: 'relay.draining on the stream' });
    const during = await info(server);
    expect(during.draining).toBe(true);
    expect(during.workers[0].counts).toMatchObject({ routers: 1, transports: 2, producers: 1, consumers: 1 });
    expect(server.child.exitCode).toBeNull();

    // The last room ends: the process exits, cleanly, soon after.
    const closedAt = performance.now();
    await relay.closeRouter(router.id);
    const exit = await server.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.at - closedAt).toBeLessThan(5000);
    expect(events.filter((e) => e.type === 'router.closed')).toEqual([expect.objectContaining({ routerId: router.id, reason: 'api' })]);
  });

  it('after DRAIN_TIMEOUT_S closes the rooms left with router.closed shutdown and exits 0', { timeout: 60_000 }, async () => {
    const { server, relay, events } = await serverWithEvents({ DRAIN_TIMEOUT_S: '2' });
    const router = await relay.createRouter();
    await relay.createTransport({ routerId: router.id, direction: 'send' });

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.at - signalled).toBeGreaterThanOrEqual(2000);
    expect(exit.at - signalled).toBeLessThan(2000 + 4000 + 1000);
    expect(events.map((e) => e.type)).toContain('relay.draining');
    expect(events.filter((e) => e.type === 'router.closed')).toEqual([expect.objectContaining({ routerId: router.id, reason: 'shutdown' })]);
    expect(events.filter((e) => e.type === 'transport.closed')).toEqual([expect.objectContaining({ reason: 'shutdown' })]);
  });

  it('shuts down at once on a second signal during the drain', { timeout: 60_000 }, async () => {
    const { server, relay } = await serverWithEvents({ DRAIN_TIMEOUT_S: '30' });
    await relay.createRouter();
    server.child.kill('SIGTERM');
    await waitFor(async () => (await readyStatus(server)) === 503, { timeoutMs: 3000, what: '/readyz 503' });
    await sleep(300);
    expect(server.child.exitCode).toBeNull();
    const second = performance.now();
    server.child.kill('SIGINT');
    const exit = await server.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.at - second).toBeLessThan(4000 + 1000);
  });
});
