// Issue 32 #3 against the real server process: a stream filtered to a quiet router stays open through
// more events of other routers than EVENTS_BUFFER_SIZE holds (it used to be cut off as "slow"), gets
// its router's next event, and its heartbeat carries a position a client resumes from without resync;
// an older position is replayed from the event log (issue 39).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { eventually, openStream } from './support.js';

const BUFFER_SIZE = 100;
let server: ServerProcess;
let relay: RelayClient;
const controllers: AbortController[] = [];

beforeAll(async () => {
  server = await startServer({ EVENTS_BUFFER_SIZE: String(BUFFER_SIZE), EVENTS_SUBSCRIBER_MAX_QUEUED: '10', EVENTS_HEARTBEAT_S: '1' });
  relay = createRelayClient({ baseUrl: server.url, token: SERVER_TOKEN });
});
afterAll(async () => {
  for (const c of controllers) c.abort();
  await server?.stop();
});

function stream(options: { query?: string; lastEventId?: string }) {
  const controller = new AbortController();
  controllers.push(controller);
  return openStream(server.url, { ...options, token: SERVER_TOKEN, signal: controller.signal });
}

async function openStreams(): Promise<number> {
  const res = await fetch(`${server.url}/internal/info`, { headers: { 'X-Internal-Token': SERVER_TOKEN } });
  return ((await res.json()) as { events: { streams: number } }).events.streams;
}

describe('a stream filtered to a quiet router', () => {
  it('stays open through more events of other routers than the buffer holds, and gets its next event', async () => {
    const quiet = await relay.createRouter({ appData: { room: 'quiet' } });
    const filtered = await stream({ query: `?routerId=${quiet.id}` });
    const all = await stream({});
    expect(filtered.response.status).toBe(200);
    await filtered.reader!.until(() => filtered.reader!.comments.some((c) => c.startsWith('cursor ')), 5000, 'the cursor');
    await all.reader!.until(() => all.reader!.comments.some((c) => c.startsWith('cursor ')), 5000, 'the cursor');

    // 1.3 buffers' worth of events of other routers (router.closed, one each).
    const busy = Math.ceil(BUFFER_SIZE * 1.3);
    for (let i = 0; i < busy; i++) {
      const router = await relay.createRouter({ appData: { room: `busy-${i}` } });
      await relay.closeRouter(router.id);
    }
    await all.reader!.frameCount(busy, 20_000);
    const lastBusy = all.reader!.frames.at(-1)!.id!;
    expect(all.reader!.events().every((e) => e.type === 'router.closed' && e.routerId !== quiet.id)).toBe(true);

    // Still open, nothing written to it but heartbeats, one of which carries its new position.
    await filtered.reader!.until(() => filtered.reader!.comments.includes(`cursor ${lastBusy}`), 5000, 'a heartbeat with the position past the other routers');
    expect(filtered.reader!.done).toBe(false);
    expect(filtered.reader!.frames).toEqual([]);
    expect(await openStreams()).toBe(2);

    await relay.closeRouter(quiet.id);
    await filtered.reader!.frameCount(1, 5000);
    expect(filtered.reader!.events()).toEqual([expect.objectContaining({ type: 'router.closed', routerId: quiet.id, reason: 'api' })]);
    expect(server.logLines().filter((l) => String(l.msg).includes('cut off'))).toEqual([]);

    // A client that got the heartbeat's position resumes from it: the quiet router's event is
    // replayed, no resync, although its last event was a buffer and more ago.
    const resumed = await stream({ query: `?routerId=${quiet.id}`, lastEventId: lastBusy });
    const [first] = await resumed.reader!.frameCount(1, 5000);
    expect(first).toMatchObject({ event: 'router.closed', id: filtered.reader!.frames[0]!.id });
    // The cursor it joined at has left the buffer: the event log replays what its filter wants (issue
    // 39; it used to resync), then it goes on live.
    const stale = await stream({ query: `?routerId=${quiet.id}`, lastEventId: filtered.reader!.comments[0]!.replace('cursor ', '') });
    expect((await stale.reader!.frameCount(1, 5000))[0]).toMatchObject({ event: 'router.closed', id: filtered.reader!.frames[0]!.id });
    for (const c of controllers.splice(0)) c.abort();
    await eventually(async () => (await openStreams()) === 0, 5000, 'the streams to close');
  });
});
