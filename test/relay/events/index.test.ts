import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook, type WebhookBatch } from '../../../src/client/relay-client.js';
import { loadConfig } from '../../../src/config/index.js';
import { createLogger } from '../../../src/logger.js';
import { createRelayEvents } from '../../../src/relay/events/index.js';
import { eventually, openStream, startStreamServer, type StreamServer } from '../../events/support.js';

const SECRET = 'index-test-secret-0123456789abcdef0123';
let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function receiver() {
  const batches: WebhookBatch[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      batches.push(verifyWebhook(Buffer.concat(chunks).toString('utf8'), req.headers, SECRET));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { batches, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

describe('createRelayEvents', () => {
  it('builds the bus, stream and webhook from config.events, and shuts down in two steps', async () => {
    const hook = await receiver();
    const config = loadConfig({ EVENTS_WEBHOOK_URL: hook.url, EVENTS_WEBHOOK_SECRET: SECRET, EVENTS_HEARTBEAT_S: '1', EVENTS_MAX_STREAMS: '2' });
    const events = createRelayEvents(config.events, createLogger({ level: 'silent' }));
    const s: StreamServer = await startStreamServer({}, {}, events.bus, 0, events.streams);
    cleanup.push(() => s.close());

    const controller = new AbortController();
    cleanup.push(() => controller.abort());
    const { reader } = await openStream(s.url, { signal: controller.signal });
    await reader!.until(() => reader!.comments.length > 0);
    const e = events.bus.publish({ type: 'router.closed', routerId: 'r', appData: { room: 1 }, reason: 'api' });
    await reader!.frameCount(1);
    await eventually(() => events.webhook!.stats().delivered === 1, 5000, 'the webhook');
    expect(hook.batches[0]!.events).toEqual([e]);
    expect(events.info()).toMatchObject({ lastId: e.id, buffered: 1, streams: 1, webhook: { enabled: true, delivered: 1, queued: 0 } });

    // Step 1: open streams end (so server.close() can finish); events still reach the webhook.
    events.endStreams();
    await reader!.until(() => reader!.done, 5000, 'the stream to end');
    expect(events.info().streams).toBe(0);
    const late = events.bus.publish({ type: 'router.closed', routerId: 'r2', appData: {}, reason: 'shutdown' });
    // Step 2: the webhook delivers what is left within its deadline.
    await events.flush({ deadlineMs: 2000 });
    expect(hook.batches.flatMap((b) => b.events.map((x) => x.id))).toEqual([e.id, late.id]);
    expect(events.info().webhook).toMatchObject({ enabled: true, delivered: 2, dropped: 0 });
  });

  it('has no webhook without EVENTS_WEBHOOK_URL', async () => {
    const events = createRelayEvents(loadConfig({}).events, createLogger({ level: 'silent' }));
    expect(events.webhook).toBeUndefined();
    expect(events.info().webhook).toEqual({ enabled: false });
    await events.flush();
  });
});

describe('createRelayEvents with metrics', () => {
  it('plugs into registerEventMetrics as it is', async () => {
    const { Registry } = await import('prom-client');
    const { registerEventMetrics } = await import('../../../src/events/metrics.js');
    const events = createRelayEvents(loadConfig({}).events, createLogger({ level: 'silent' }));
    const registry = new Registry();
    registerEventMetrics(registry, events);
    events.bus.publish({ type: 'relay.draining' });
    expect(await registry.metrics()).toMatch(/media_events_published_total\{type="relay.draining"\} 1/);
  });
});
