import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/relay-client.js';
import { createLogger } from '../../src/logger.js';
import { createEventBus } from '../../src/events/bus.js';
import { webhookBatchSchema } from '../../src/relay/contract/events.js';
import { createWebhookSink, signWebhookBody, type WebhookSink } from '../../src/events/webhook.js';
import { eventually } from './support.js';
import { Receiver } from './webhook-receiver.js';

const SECRET = 'webhook-secret-0123456789abcdef0123456789';

function logSink() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

const receivers: Receiver[] = [];
const sinks: WebhookSink[] = [];
async function receiver(port?: number) {
  const r = await new Receiver().start(port);
  receivers.push(r);
  return r;
}
function sink(options: Parameters<typeof createWebhookSink>[0]) {
  const s = createWebhookSink({ retryBaseMs: 20, retryMaxMs: 200, timeoutMs: 2000, ...options });
  sinks.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.stop({ deadlineMs: 100 })));
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
});

const ice = (n: number) => ({ type: 'transport.ice' as const, transportId: `t${n}`, routerId: 'r', appData: { n }, state: 'connected' as const });

describe('event webhook', () => {
  it('POSTs signed batches that verifyWebhook accepts, and refuses tampering and stale timestamps', async () => {
    const r = await receiver();
    const bus = createEventBus();
    const webhook = sink({ url: r.url, secret: SECRET });
    bus.listen(webhook.enqueue);
    const published = [bus.publish(ice(1)), bus.publish({ type: 'relay.draining' })];
    await eventually(() => webhook.stats().delivered === 2, 5000, 'the delivery');
    const [delivery] = r.deliveries;
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['x-relay-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    const batch = verifyWebhook(delivery!.raw, delivery!.headers, SECRET);
    expect(batch).toEqual({ timestamp: Number(delivery!.headers['x-relay-timestamp']), dropped: 0, events: published });
    expect(Math.abs(batch.timestamp - Date.now() / 1000)).toBeLessThan(30);
    expect(verifyWebhook(Buffer.from(delivery!.raw), new Headers(delivery!.headers as Record<string, string>), SECRET).events).toHaveLength(2);

    const failure = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(WebhookVerificationError);
        return (e as WebhookVerificationError).reason;
      }
      return 'accepted';
    };
    expect(failure(() => verifyWebhook(delivery!.raw.replace('"t1"', '"t2"'), delivery!.headers, SECRET))).toBe('bad_signature');
    expect(failure(() => verifyWebhook(delivery!.raw, delivery!.headers, 'another-secret-0123456789abcdef0123'))).toBe('bad_signature');
    expect(failure(() => verifyWebhook(delivery!.raw, { ...delivery!.headers, 'x-relay-signature': 'sha256=zz' }, SECRET))).toBe('bad_signature');
    expect(failure(() => verifyWebhook(delivery!.raw, {}, SECRET))).toBe('missing_signature');
    expect(failure(() => verifyWebhook(delivery!.raw, delivery!.headers, SECRET, { now: () => Date.now() + 301_000 }))).toBe('stale');
    expect(failure(() => verifyWebhook(delivery!.raw, delivery!.headers, SECRET, { now: () => Date.now() + 301_000, toleranceS: 600 }))).toBe('accepted');
    // A replayed old body, even re-sent with its own valid signature, is stale.
    const old = JSON.stringify({ ...batch, timestamp: batch.timestamp - 3600 });
    expect(failure(() => verifyWebhook(old, { 'X-Relay-Signature': signWebhookBody(old, SECRET) }, SECRET))).toBe('stale');
    const notBatch = '{"hello":1}';
    expect(failure(() => verifyWebhook(notBatch, { 'x-relay-signature': signWebhookBody(notBatch, SECRET) }, SECRET))).toBe('malformed_body');
  });

  it('keeps the order across batches of at most batchMax events', async () => {
    const r = await receiver();
    const webhook = sink({ url: r.url, secret: SECRET, batchMax: 10 });
    const bus = createEventBus();
    bus.listen(webhook.enqueue);
    const published = Array.from({ length: 95 }, (_, i) => bus.publish(ice(i)));
    await eventually(() => webhook.stats().delivered === 95, 10_000, 'every event');
    const batches = r.accepted();
    expect(batches.every((b) => b.events.length <= 10)).toBe(true);
    expect(batches.length).toBeGreaterThanOrEqual(10);
    expect(batches.flatMap((b) => b.events.map((e) => e.id))).toEqual(published.map((e) => e.id));
    expect(webhook.stats()).toMatchObject({ queued: 0, failures: 0, dropped: 0 });
  });

  it('retries after 500s and timeouts with the same events, never sending the next batch first', async () => {
    const r = await receiver();
    r.answer = (n) => (n < 3 ? 500 : n === 3 ? 'hang' : 200);
    const webhook = sink({ url: r.url, secret: SECRET, batchMax: 5, timeoutMs: 1000 });
    const bus = createEventBus();
    bus.listen(webhook.enqueue);
    const published = Array.from({ length: 12 }, (_, i) => bus.publish(ice(i)));
    await eventually(() => webhook.stats().delivered === 12, 10_000, 'every event');
    const bodies = r.deliveries.map((d) => webhookBatchSchema.parse(JSON.parse(d.raw)).events.map((e) => e.id));
    // Attempts 0-3 (three 500s, one timeout) and the first success carry the same first batch.
    for (let i = 1; i <= 4; i++) expect(bodies[i]).toEqual(bodies[0]);
    expect(r.accepted().flatMap((b) => b.events.map((e) => e.id))).toEqual(published.map((e) => e.id));
    expect(r.deliveries.slice(0, 5).map((d) => d.status)).toEqual([500, 500, 500, 0, 200]);
    expect(webhook.stats().failures).toBeGreaterThanOrEqual(4); // more only if a 200 came later than the timeout under load
  });

  it('retries while the receiver is down and delivers in order once it is back', async () => {
    const first = await receiver();
    const port = first.port;
    await first.stop();
    const webhook = sink({ url: `http://127.0.0.1:${port}/hook`, secret: SECRET, batchMax: 3 });
    const bus = createEventBus();
    bus.listen(webhook.enqueue);
    const published = Array.from({ length: 10 }, (_, i) => bus.publish(ice(i)));
    await eventually(() => webhook.stats().failures >= 3, 10_000, 'failed attempts');
    expect(webhook.stats()).toMatchObject({ delivered: 0, queued: 10 });
    const back = await receiver(port);
    await eventually(() => webhook.stats().delivered === 10, 10_000, 'the delivery after the receiver came back');
    expect(back.accepted().flatMap((b) => b.events.map((e) => e.id))).toEqual(published.map((e) => e.id));
  });

  it('bounds the queue: counts and logs dropped events once per episode, and tells the receiver', async () => {
    const first = await receiver();
    const port = first.port;
    await first.stop();
    const { lines, logger } = logSink();
    const webhook = sink({ url: `http://127.0.0.1:${port}/hook?token=secret-in-url`, secret: SECRET, queueMax: 50, batchMax: 100, logger });
    const bus = createEventBus();
    bus.listen(webhook.enqueue);
    const published = Array.from({ length: 500 }, (_, i) => bus.publish(ice(i)));
    expect(webhook.stats()).toMatchObject({ queued: 50, dropped: 450 });
    const fullLogs = () => lines.filter((l) => String(l.msg).includes('queue full'));
    expect(fullLogs()).toHaveLength(1);
    const back = await receiver(port);
    await eventually(() => webhook.stats().delivered === 50, 10_000, 'the queued events');
    const after = bus.publish(ice(999));
    await eventually(() => webhook.stats().delivered === 51, 10_000, 'the event after the gap');
    const batches = back.accepted();
    expect(batches.flatMap((b) => b.events.map((e) => e.id))).toEqual([...published.slice(0, 50), after].map((e) => e.id));
    // The gap is announced once, after the 50 queued events and before anything published later
    // (here by a marker batch, since the queue drained before the next event came).
    const gapAt = batches.findIndex((b) => b.dropped > 0);
    expect(batches[gapAt]!.dropped).toBe(450);
    expect(batches.filter((b) => b.dropped > 0)).toHaveLength(1);
    expect(batches.slice(0, gapAt).flatMap((b) => b.events).length).toBe(50);
    expect(batches.slice(gapAt).flatMap((b) => b.events.map((e) => e.id))).toEqual([after.id]);
    expect(lines.filter((l) => String(l.msg).includes('takes events again'))).toEqual([expect.objectContaining({ dropped: 450 })]);
    // A second episode logs once more; nothing ever logs the URL's query or the secret.
    await back.stop();
    for (let i = 0; i < 300; i++) bus.publish(ice(i));
    expect(fullLogs()).toHaveLength(2);
    expect(webhook.stats().dropped).toBeGreaterThanOrEqual(450 + 250);
    const text = JSON.stringify(lines);
    expect(text).not.toContain('secret-in-url');
    expect(text).not.toContain(SECRET);
  });

  it('sends a gap marker when events were dropped and nothing followed', async () => {
    const first = await receiver();
    const port = first.port;
    await first.stop();
    const webhook = sink({ url: `http://127.0.0.1:${port}/hook`, secret: SECRET, queueMax: 5 });
    const bus = createEventBus();
    bus.listen(webhook.enqueue);
    for (let i = 0; i < 8; i++) bus.publish(ice(i));
    const back = await receiver(port);
    await eventually(() => back.accepted().some((b) => b.dropped === 3), 10_000, 'the gap marker');
    expect(back.accepted().map((b) => [b.events.length, b.dropped])).toEqual([
      [5, 0],
      [0, 3],
    ]);
  });

  it('gives up on an attempt that never settles although its abort fired (watchdog), and a late answer changes nothing', async () => {
    // An HTTP client that ignores its abort signal: what a lost AbortSignal.any() deadline looks like.
    const calls: Array<{ ids: string[]; settle: (response: Response) => void }> = [];
    let answering = false;
    const hungFetch = ((_url: URL, init: RequestInit) => {
      // The sink posts its batch as JSON text.
      const ids = webhookBatchSchema.parse(JSON.parse(init.body as string)).events.map((e) => e.id);
      return new Promise<Response>((resolve) => {
        calls.push({ ids, settle: resolve });
        if (answering) resolve(new Response(null, { status: 200 }));
      });
    }) as unknown as typeof fetch;
    const { lines, logger } = logSink();
    const webhook = sink({ url: 'http://127.0.0.1:9/hook', secret: SECRET, fetch: hungFetch, timeoutMs: 100, watchdogMarginMs: 100, batchMax: 2, logger });
    const bus = createEventBus();
    bus.listen(webhook.enqueue);
    const published = [1, 2, 3].map((i) => bus.publish(ice(i)));
    await eventually(() => webhook.stats().failures >= 2, 5000, 'two attempts given up');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls) expect(call.ids).toEqual(published.slice(0, 2).map((e) => e.id)); // the same batch again
    expect(lines.filter((l) => String(l.msg).includes('did not settle')).length).toBeGreaterThanOrEqual(2);
    expect(lines.find((l) => String(l.msg).includes('did not settle'))).toMatchObject({ level: 50, timeoutMs: 100, watchdogMarginMs: 100 });

    // The first, abandoned attempt is answered late: the queue does not move.
    calls[0]!.settle(new Response(null, { status: 200 }));
    await eventually(() => lines.some((l) => String(l.msg).includes('accepted late')), 2000, 'the late answer to be logged');
    expect(webhook.stats()).toMatchObject({ delivered: 0, batches: 0, queued: 3 });

    // The receiver answers from now on: every event once, in order; then the other abandoned
    // attempts settle late too, and nothing changes.
    answering = true;
    await eventually(() => webhook.stats().delivered === 3, 5000, 'the delivery');
    for (const call of calls) call.settle(new Response(null, { status: 200 }));
    await new Promise((r) => setTimeout(r, 50));
    expect(webhook.stats()).toMatchObject({ delivered: 3, batches: 2, queued: 0, dropped: 0 });
    const acceptedIds = calls.slice(-2).flatMap((c) => c.ids);
    expect(acceptedIds).toEqual(published.map((e) => e.id));
  });

  it('stop() ends within its deadline even when the attempt in flight never settles', async () => {
    let calls = 0;
    const neverSettles = (() => (calls++, new Promise<Response>(() => {}))) as unknown as typeof fetch;
    const webhook = createWebhookSink({ url: 'http://127.0.0.1:9/hook', secret: SECRET, fetch: neverSettles, timeoutMs: 60_000 });
    for (let i = 0; i < 3; i++) webhook.enqueue(createEventBus().publish(ice(i)));
    await eventually(() => calls === 1, 5000, 'the attempt to start');
    const started = Date.now();
    expect(await webhook.stop({ deadlineMs: 300 })).toEqual({ undelivered: 3 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(webhook.stats()).toMatchObject({ failures: 1, dropped: 3, queued: 0 });
  });

  it('stop() called while a failing attempt is still in flight retries at once instead of waiting out the backoff', async () => {
    // The race CI met: stop() came after the receiver had the first POST but before its 500 was read,
    // so no backoff wait was under way to cut short, and the one that followed ran to the deadline.
    const answers: ((response: Response) => void)[] = [];
    const held = (() => new Promise<Response>((resolve) => answers.push(resolve))) as unknown as typeof fetch;
    const webhook = createWebhookSink({ url: 'http://127.0.0.1:9/hook', secret: SECRET, fetch: held, retryBaseMs: 60_000, retryMaxMs: 60_000 });
    for (let i = 0; i < 3; i++) webhook.enqueue(createEventBus().publish(ice(i)));
    await eventually(() => answers.length === 1, 5000, 'the first attempt to start');
    const started = Date.now();
    const stopping = webhook.stop({ deadlineMs: 5000 });
    answers[0]!(new Response(null, { status: 500 }));
    await eventually(() => answers.length === 2, 2000, 'the retry stop() asks for');
    answers[1]!(new Response(null, { status: 200 }));
    expect(await stopping).toEqual({ undelivered: 0 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(webhook.stats()).toMatchObject({ delivered: 3, failures: 1, dropped: 0 });
  });

  it('stop() flushes what is queued within its deadline, and gives up in time when the receiver is gone', async () => {
    const r = await receiver();
    r.answer = (n) => (n === 0 ? 500 : 200);
    const webhook = createWebhookSink({ url: r.url, secret: SECRET, retryBaseMs: 60_000, retryMaxMs: 60_000, batchMax: 4 });
    for (let i = 0; i < 10; i++) webhook.enqueue(createEventBus().publish(ice(i)));
    await eventually(() => r.deliveries.length === 1, 5000, 'the first (failing) attempt');
    // The sink now waits a minute before retrying; stop() retries at once.
    const started = Date.now();
    expect(await webhook.stop({ deadlineMs: 5000 })).toEqual({ undelivered: 0 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(webhook.stats().delivered).toBe(10);

    const gone = await receiver();
    const port = gone.port;
    await gone.stop();
    const { lines, logger } = logSink();
    const stuck = createWebhookSink({ url: `http://127.0.0.1:${port}/`, secret: SECRET, retryBaseMs: 10, retryMaxMs: 50, logger });
    for (let i = 0; i < 7; i++) stuck.enqueue(createEventBus().publish(ice(i)));
    const t0 = Date.now();
    expect(await stuck.stop({ deadlineMs: 300 })).toEqual({ undelivered: 7 });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(stuck.stats().dropped).toBe(7);
    expect(lines.some((l) => l.undelivered === 7)).toBe(true);
    stuck.enqueue(createEventBus().publish(ice(1)));
    expect(stuck.stats()).toMatchObject({ queued: 0, dropped: 8 });
  });
});
