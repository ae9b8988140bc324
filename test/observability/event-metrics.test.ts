import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createEventBus } from '../../src/events/bus.js';
import { createEventStreams } from '../../src/events/sse.js';
import { createWebhookSink } from '../../src/events/webhook.js';
import { registerEventMetrics } from '../../src/events/metrics.js';

describe('relay event metrics', () => {
  it('reports what the bus, the streams and the webhook counted', async () => {
    const bus = createEventBus({ bufferSize: 100, maxQueued: 2, overflowGraceMs: 0 });
    const streams = createEventStreams(bus, { maxStreams: 1 });
    // A receiver nobody listens on (port 9 of 127.0.0.1, discard): every attempt fails.
    const webhook = createWebhookSink({ url: 'http://127.0.0.1:9/hook', secret: 's', queueMax: 3, retryBaseMs: 10_000 });
    bus.listen(webhook.enqueue);
    const registry = new Registry();
    registerEventMetrics(registry, { bus, streams, webhook });

    const stalled = bus.subscribe();
    bus.subscribe({ lastEventId: 'garbage' }).close();
    for (let i = 0; i < 5; i++) bus.publish({ type: 'router.silence', routerId: 'r' });
    bus.publish({ type: 'relay.draining' });
    expect(stalled.ended).toBe('overflow');

    const text = await registry.metrics();
    expect(text).toMatch(/media_events_published_total\{type="router.silence"\} 5/);
    expect(text).toMatch(/media_events_published_total\{type="relay.draining"\} 1/);
    expect(text).toMatch(/media_events_resyncs_total\{reason="unknown_id"\} 1/);
    expect(text).toMatch(/media_events_subscriber_overflows_total 1/);
    expect(text).toMatch(/media_event_streams_open 0/);
    expect(text).toMatch(/media_events_webhook_dropped_total 3/);
    expect(text).toMatch(/media_events_webhook_queued 3/);
    await webhook.stop({ deadlineMs: 50 });
    expect(await registry.metrics()).toMatch(/media_events_webhook_dropped_total 6/);
  });
});
