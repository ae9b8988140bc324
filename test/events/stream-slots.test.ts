// Issue 32 #2 against the real server process: HEAD /internal/v1/events answers headers only and takes
// no stream slot (it used to hold one for ever), and every way a GET can end gives its slot back.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { eventually } from './support.js';

const MAX_STREAMS = 3;
let server: ServerProcess;

beforeAll(async () => {
  server = await startServer({ EVENTS_MAX_STREAMS: String(MAX_STREAMS), EVENTS_HEARTBEAT_S: '1' });
});
afterAll(async () => {
  await server?.stop();
});

const AUTH = { 'X-Internal-Token': SERVER_TOKEN };
const eventsUrl = (query = '') => `${server.url}/internal/v1/events${query}`;

/** Event streams the relay counts as open (GET /internal/info). */
async function openStreams(): Promise<number> {
  const res = await fetch(`${server.url}/internal/info`, { headers: AUTH });
  return ((await res.json()) as { events: { streams: number } }).events.streams;
}

async function head(query = '', headers: Record<string, string> = AUTH): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(eventsUrl(query), { method: 'HEAD', headers, signal: AbortSignal.timeout(5000) });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** A raw HTTP/1.1 GET of the stream on its own socket; resolves once connected and the request is written. */
async function rawGet(request = `GET /internal/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Internal-Token: ${SERVER_TOKEN}\r\n\r\n`): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(server.port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(request);
  return { socket, received: () => text };
}

/** Every slot is free: MAX_STREAMS GETs open (200), one more is refused (503); then they are closed again. */
async function expectAllSlotsFree(): Promise<void> {
  await eventually(async () => (await openStreams()) === 0, 5000, 'every slot to be given back');
  const controllers = Array.from({ length: MAX_STREAMS }, () => new AbortController());
  try {
    const statuses = await Promise.all(controllers.map(async (c) => (await fetch(eventsUrl(), { headers: AUTH, signal: c.signal })).status));
    expect(statuses).toEqual(Array(MAX_STREAMS).fill(200));
    const refused = await fetch(eventsUrl(), { headers: AUTH });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'STREAM_LIMIT_EXCEEDED' });
  } finally {
    for (const c of controllers) c.abort();
  }
  await eventually(async () => (await openStreams()) === 0, 5000, 'the check streams to close');
}

describe('event stream slots on a started server', () => {
  it('HEAD answers the headers of the stream, validates like GET, and takes no slot', async () => {
    // Far more HEADs than there are slots, with and without a filter.
    for (let i = 0; i < 4 * MAX_STREAMS; i++) {
      const answer = await head(i % 2 === 0 ? '' : `?routerId=room-${i}`);
      expect(answer, `HEAD #${i}`).toEqual({ status: 200, type: expect.stringContaining('text/event-stream'), body: '' });
    }
    expect(await openStreams()).toBe(0);
    // The same checks as GET, headers only.
    expect(await head('?routerId=a%0Ab')).toMatchObject({ status: 400, type: expect.stringContaining('application/json'), body: '' });
    expect(await head('', {})).toMatchObject({ status: 401, body: '' });
    expect(await head('', { 'X-Internal-Token': 'wrong' })).toMatchObject({ status: 401, body: '' });
    // A GET after all those HEADs gets its stream.
    const controller = new AbortController();
    const res = await fetch(eventsUrl(), { headers: AUTH, signal: controller.signal });
    expect(res.status).toBe(200);
    // While every slot is taken, HEAD says what a GET would get: 503, and still takes nothing.
    const others = Array.from({ length: MAX_STREAMS - 1 }, () => new AbortController());
    await Promise.all(others.map((c) => fetch(eventsUrl(), { headers: AUTH, signal: c.signal })));
    expect(await openStreams()).toBe(MAX_STREAMS);
    expect(await head()).toMatchObject({ status: 503, body: '' });
    controller.abort();
    for (const c of others) c.abort();
    await expectAllSlotsFree();
  });

  it('gives the slot back however a GET ends: aborted before, while and after the stream starts', async () => {
    // Aborted right after the request was written (before the answer).
    for (let i = 0; i < 5; i++) (await rawGet()).socket.destroy();
    // Aborted half-way through the request's headers (the handler never runs).
    for (let i = 0; i < 3; i++) (await rawGet(`GET /internal/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Internal-`)).socket.destroy();
    await expectAllSlotsFree();

    // Aborted once the status line arrived, before reading the cursor; reset instead of closed.
    for (let i = 0; i < MAX_STREAMS; i++) {
      const get = await rawGet();
      await eventually(() => get.received().startsWith('HTTP/1.1 200'), 5000, 'the status line');
      if (i % 2 === 0) get.socket.resetAndDestroy();
      else get.socket.destroy();
    }
    await expectAllSlotsFree();

    // Aborted after the cursor, and after a heartbeat (EVENTS_HEARTBEAT_S=1), by fetch's AbortController.
    for (const after of ['cursor', 'heartbeat']) {
      const controllers: AbortController[] = [];
      for (let i = 0; i < MAX_STREAMS; i++) {
        const controller = new AbortController();
        controllers.push(controller);
        const res = await fetch(eventsUrl(i === 0 ? '' : `?routerId=room-${i}`), { headers: AUTH, signal: controller.signal });
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        let text = '';
        const decoder = new TextDecoder();
        while (!text.includes(after === 'cursor' ? ': cursor ' : ': heartbeat')) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the stream ended early');
          text += decoder.decode(value, { stream: true });
        }
      }
      for (const c of controllers) c.abort();
      await expectAllSlotsFree();
    }

    // A burst of GETs started and dropped at once, at random points.
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), (i * 7) % 40);
        await fetch(eventsUrl(), { headers: AUTH, signal: controller.signal })
          .then((res) => res.body?.cancel())
          .catch(() => {});
      }),
    );
    await expectAllSlotsFree();
    expect(server.logLines().filter((l) => l.level >= 50)).toEqual([]);
  });
});
