// Issue 27 #9: the webhook's backoff holds in every state, shutdown included (it retried every
// 100 ms there: 34 identical warnings in 3.5 s), and the log names the cause once per change of
// state (`ECONNREFUSED 127.0.0.1:<port>`, then `HTTP 503`, then delivering again), not per attempt.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createEventBus } from '../../src/events/bus.js';
import { createWebhookSink, failureCause } from '../../src/events/webhook.js';
import { createLogger } from '../../src/logger.js';
import { freePort } from '../support/server-process.js';
import { eventually } from './support.js';

const SECRET = 'webhook-backoff-secret-0123456789abcdef';
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function logSink() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', destination }) };
}

const event = () => createEventBus().publish({ type: 'transport.ice', transportId: 't', routerId: 'r', appData: {}, state: 'connected' });

/** A fetch that counts its calls and when they were made: the real fetch underneath. */
function countingFetch() {
  const at: number[] = [];
  const wrapped: typeof fetch = (input, init) => {
    at.push(performance.now());
    return fetch(input, init);
  };
  return { at, fetch: wrapped };
}

it('names the cause of a refused connection', async () => {
  const port = await freePort();
  const error = await fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
  expect(failureCause(error)).toBe(`ECONNREFUSED 127.0.0.1:${port}`);
});

it('keeps its backoff while stopping: a few attempts in 3.5 s and one warning, not one per attempt', { timeout: 20_000 }, async () => {
  const port = await freePort(); // nothing listens: every attempt is refused
  const { lines, logger } = logSink();
  const counted = countingFetch();
  const webhook = createWebhookSink({ url: `http://127.0.0.1:${port}/hook`, secret: SECRET, logger, fetch: counted.fetch });
  for (let i = 0; i < 5; i++) webhook.enqueue(event());
  await eventually(() => counted.at.length >= 1, 5000, 'the first attempt');
  const stopping = performance.now();
  const { undelivered } = await webhook.stop({ deadlineMs: 3500 });
  expect(undelivered).toBe(5);
  // 0.5 s doubling (with jitter between half and all of it), and one immediate retry when stop()
  // begins: at most 1 + 1 + log2(3.5 s / 0.25 s) + 1 attempts, where 100 ms retries made 35.
  expect(counted.at.length).toBeGreaterThanOrEqual(2);
  expect(counted.at.length).toBeLessThanOrEqual(7);
  // The immediate retry is the first attempt after stop() began: usually the second, later when this
  // test saw the first attempt late (a loaded machine: once the fifth). Every other waited its backoff.
  const immediate = counted.at.findIndex((at) => at >= stopping);
  expect(immediate).toBeGreaterThanOrEqual(1);
  for (let i = 1; i < counted.at.length; i++) {
    if (i === immediate) continue;
    const expectedMin = Math.min(30_000, 500 * 2 ** (i - 1)) / 2;
    expect(counted.at[i]! - counted.at[i - 1]!, `wait before attempt ${i + 1}`).toBeGreaterThanOrEqual(expectedMin - 20);
  }
  const failing = lines.filter((l) => /event webhook failing/.test(l.msg));
  expect(failing).toHaveLength(1);
  expect(failing[0]!.cause).toBe(`ECONNREFUSED 127.0.0.1:${port}`);
  expect(failing[0]!.msg).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
});

it('logs once per change of state: refused, then answering 503, then delivering again', { timeout: 30_000 }, async () => {
  const port = await freePort();
  const { lines, logger } = logSink();
  let status = 503;
  const webhook = createWebhookSink({ url: `http://127.0.0.1:${port}/hook`, secret: SECRET, logger, retryBaseMs: 50, retryMaxMs: 100 });
  webhook.enqueue(event());
  await eventually(() => lines.some((l) => /ECONNREFUSED/.test(l.msg)), 5000, 'the refused attempts');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status).end());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await eventually(() => lines.some((l) => /HTTP 503/.test(l.msg)), 5000, 'the 503 answers');
  // Several 503s at 50-100 ms: still one line for them.
  await new Promise((resolve) => setTimeout(resolve, 600));
  status = 200;
  await eventually(() => lines.some((l) => l.msg === 'event webhook delivering again'), 5000, 'the delivery');
  await webhook.stop({ deadlineMs: 500 });
  expect(webhook.stats().failures).toBeGreaterThan(4);
  expect(lines.filter((l) => l.level >= 40).map((l) => l.cause)).toEqual([`ECONNREFUSED 127.0.0.1:${(server.address() as AddressInfo).port}`, 'HTTP 503']);
  const resumed = lines.find((l) => l.msg === 'event webhook delivering again')!;
  expect(resumed.failedAttempts).toBeGreaterThan(1);
});
