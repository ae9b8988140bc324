// The webhook's Standard Webhooks signature, checked with the spec's reference package
// (standardwebhooks): every delivery verifies with it, a tampered one does not; a batch keeps its
// webhook-id across retries; the typed client's verifyWebhook accepts the same headers.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/relay-client.js';
import { createEventBus } from '../../src/events/bus.js';
import { createWebhookSink, signWebhookBody, type WebhookSink } from '../../src/events/webhook.js';
import { webhookBatchSchema } from '../../src/relay/contract/events.js';
import { eventually } from './support.js';
import { Receiver, type Delivery } from './webhook-receiver.js';

const SECRET = 'standard-webhook-secret-0123456789abcdef';
/** A secret in the spec's own form: `whsec_` and the base64 of the key's bytes. */
const WHSEC = `whsec_${randomBytes(24).toString('base64')}`;

const receivers: Receiver[] = [];
const sinks: WebhookSink[] = [];
async function receiver() {
  const r = await new Receiver().start();
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

/** The headers as the package's verify() takes them (Node gives each of these as one string). */
function plain(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
}

/** What the package's verify() says: the parsed body, or 'refused'. */
function packageVerdict(webhook: Webhook, raw: string, headers: Record<string, string>): unknown {
  try {
    return webhook.verify(raw, headers);
  } catch {
    return 'refused';
  }
}

function reasonOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookVerificationError);
    return (e as WebhookVerificationError).reason;
  }
  return 'accepted';
}

const idOf = (d: Delivery) => d.headers['webhook-id'];

describe('Standard Webhooks signature of the webhook', () => {
  it('each delivery verifies with the standardwebhooks package and the raw secret; a tampered one does not', async () => {
    const r = await receiver();
    const bus = createEventBus();
    const webhook = sink({ url: r.url, secret: SECRET, batchMax: 3 });
    bus.listen(webhook.enqueue);
    const published = Array.from({ length: 7 }, (_, i) => bus.publish(ice(i)));
    await eventually(() => webhook.stats().delivered === 7, 5000, 'the deliveries');
    expect(r.deliveries.length).toBeGreaterThanOrEqual(3);

    const standard = new Webhook(SECRET, { format: 'raw' });
    for (const d of r.deliveries) {
      const headers = plain(d.headers);
      expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      // One attempt, one time: the Standard Webhooks timestamp is the body's and X-Relay-Timestamp's.
      expect(headers['webhook-timestamp']).toBe(headers['x-relay-timestamp']);
      expect(Number(headers['webhook-timestamp'])).toBe(webhookBatchSchema.parse(JSON.parse(d.raw)).timestamp);
      expect(packageVerdict(standard, d.raw, headers)).toEqual(JSON.parse(d.raw));
      // The relay's own signature is there as before, and the client checks either.
      expect(headers['x-relay-signature']).toBe(signWebhookBody(d.raw, SECRET));
      expect(verifyWebhook(d.raw, headers, SECRET).events).toEqual(JSON.parse(d.raw).events);
      const { 'webhook-signature': _s, ...relayOnly } = headers;
      expect(verifyWebhook(d.raw, relayOnly, SECRET).events).toEqual(JSON.parse(d.raw).events);
      // Each signature present must hold: a valid X-Relay-Signature does not cover a forged webhook-id.
      expect(reasonOf(() => verifyWebhook(d.raw, { ...headers, 'webhook-id': 'msg_other' }, SECRET))).toBe('bad_signature');

      const tampered = d.raw.replace(/"t(\d)"/, '"t9$1"');
      expect(tampered).not.toBe(d.raw);
      expect(packageVerdict(standard, tampered, headers)).toBe('refused');
      expect(packageVerdict(standard, d.raw, { ...headers, 'webhook-id': 'msg_other' })).toBe('refused');
      expect(packageVerdict(standard, d.raw, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) })).toBe('refused');
      expect(packageVerdict(new Webhook('another-secret-0123456789abcdef', { format: 'raw' }), d.raw, headers)).toBe('refused');
    }
    expect(new Set(r.deliveries.map(idOf)).size).toBe(r.deliveries.length); // one id per batch
    expect(r.accepted().flatMap((b) => b.events.map((e) => e.id))).toEqual(published.map((e) => e.id));
  });

  it('signs with the decoded bytes of a whsec_ secret, as the spec says', async () => {
    const r = await receiver();
    const bus = createEventBus();
    const webhook = sink({ url: r.url, secret: WHSEC });
    bus.listen(webhook.enqueue);
    bus.publish(ice(1));
    await eventually(() => webhook.stats().delivered === 1, 5000, 'the delivery');
    const [d] = r.deliveries;
    const headers = plain(d!.headers);
    expect(packageVerdict(new Webhook(WHSEC), d!.raw, headers)).toEqual(JSON.parse(d!.raw));
    expect(packageVerdict(new Webhook(WHSEC.slice('whsec_'.length)), d!.raw, headers)).toEqual(JSON.parse(d!.raw));
    // Not the secret's characters: a receiver reading it raw would be refused.
    expect(packageVerdict(new Webhook(WHSEC, { format: 'raw' }), d!.raw, headers)).toBe('refused');
    expect(packageVerdict(new Webhook(WHSEC), d!.raw.replace('"t1"', '"t2"'), headers)).toBe('refused');
    expect(verifyWebhook(d!.raw, headers, WHSEC).events).toHaveLength(1);
    // X-Relay-Signature keeps its key: the secret as given, whatever its form.
    expect(headers['x-relay-signature']).toBe(signWebhookBody(d!.raw, WHSEC));
  });

  it("a secret's UTF-8 bytes are the key: a non-ASCII secret verifies when the receiver passes its bytes", async () => {
    const secret = 'clé-secrète-ünïcødé-0123456789abcdef';
    const r = await receiver();
    const webhook = sink({ url: r.url, secret });
    webhook.enqueue(createEventBus().publish(ice(1)));
    await eventually(() => webhook.stats().delivered === 1, 5000, 'the delivery');
    const [d] = r.deliveries;
    const headers = plain(d!.headers);
    expect(packageVerdict(new Webhook(new TextEncoder().encode(secret), { format: 'raw' }), d!.raw, headers)).toEqual(JSON.parse(d!.raw));
    expect(verifyWebhook(d!.raw, headers, secret).events).toHaveLength(1);
  });

  it('refuses a whsec_ secret that is not padded standard base64 after its prefix', () => {
    for (const secret of ['whsec_', 'whsec_not base64!', 'whsec_QUJD==', 'whsec_QUJ', 'whsec_QU-_']) {
      expect(() => createWebhookSink({ url: 'http://127.0.0.1:9/hook', secret }), secret).toThrow(/EVENTS_WEBHOOK_SECRET/);
    }
    expect(() => createWebhookSink({ url: 'http://127.0.0.1:9/hook', secret: 'whsec_QUJD' })).not.toThrow();
  });

  it('keeps a batch and its webhook-id across retries; events that came meanwhile wait for the next batch', async () => {
    const r = await receiver();
    r.answer = (n) => (n < 2 ? 500 : 200);
    const bus = createEventBus();
    // A backoff of 0.5 to 1 s: the test publishes more events before the first retry.
    const webhook = sink({ url: r.url, secret: SECRET, batchMax: 10, retryBaseMs: 1000, retryMaxMs: 1000 });
    bus.listen(webhook.enqueue);
    const first = [bus.publish(ice(1)), bus.publish(ice(2))];
    await eventually(() => r.deliveries.length === 1, 5000, 'the first (refused) attempt');
    const later = [bus.publish(ice(3)), bus.publish(ice(4))];
    await eventually(() => webhook.stats().delivered === 4, 10_000, 'every event');

    const ids = (d: Delivery) => webhookBatchSchema.parse(JSON.parse(d.raw)).events.map((e) => e.id);
    expect(r.deliveries.map((d) => d.status)).toEqual([500, 500, 200, 200]);
    // The three attempts of the first batch: the same events under the same id, each signed anew.
    const attempts = r.deliveries.slice(0, 3);
    for (const d of attempts) {
      expect(ids(d)).toEqual(first.map((e) => e.id));
      expect(idOf(d)).toBe(idOf(r.deliveries[0]!));
      expect(packageVerdict(new Webhook(SECRET, { format: 'raw' }), d.raw, plain(d.headers))).not.toBe('refused');
    }
    expect(ids(r.deliveries[3]!)).toEqual(later.map((e) => e.id));
    expect(idOf(r.deliveries[3]!)).not.toBe(idOf(r.deliveries[0]!));
  });
});

describe('verifyWebhook with the Standard Webhooks headers', () => {
  const body = JSON.stringify({ timestamp: 1_700_000_000, dropped: 0, events: [{ id: 'e-1', type: 'relay.draining', time: '2023-11-14T22:13:20.000Z' }] });
  const at = (seconds: number) => () => seconds * 1000;
  /** Headers signed by the reference package itself (no X-Relay-Signature): an independent signer. */
  function signed(secret: string | Uint8Array, raw = body, timestamp = 1_700_000_000, id = 'msg_1'): Record<string, string> {
    const webhook = typeof secret === 'string' && secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
    return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhook.sign(id, new Date(timestamp * 1000), raw) };
  }

  it("accepts what the package signs, with the raw secret or a whsec_ one, and checks the header's time", () => {
    const now = at(1_700_000_000);
    expect(verifyWebhook(body, signed(SECRET), SECRET, { now })).toEqual(JSON.parse(body));
    expect(verifyWebhook(Buffer.from(body), new Headers(signed(SECRET)), SECRET, { now }).events).toHaveLength(1);
    expect(verifyWebhook(body, signed(WHSEC), WHSEC, { now }).events).toHaveLength(1);
    // Several signatures (a key rotation): one v1 match is enough; other versions are ignored.
    const { 'webhook-signature': real, ...rest } = signed(SECRET);
    expect(reasonOf(() => verifyWebhook(body, { ...rest, 'webhook-signature': `v1,${'A'.repeat(43)}= ${real}` }, SECRET, { now }))).toBe('accepted');
    expect(reasonOf(() => verifyWebhook(body, { ...rest, 'webhook-signature': real!.replace('v1,', 'v2,') }, SECRET, { now }))).toBe('bad_signature');
    // The signed time is the header's: 5 minutes either way by default, toleranceS otherwise.
    expect(reasonOf(() => verifyWebhook(body, signed(SECRET), SECRET, { now: at(1_700_000_301) }))).toBe('stale');
    expect(reasonOf(() => verifyWebhook(body, signed(SECRET), SECRET, { now: at(1_699_999_699) }))).toBe('stale');
    expect(reasonOf(() => verifyWebhook(body, signed(SECRET), SECRET, { now: at(1_700_000_301), toleranceS: 600 }))).toBe('accepted');
    expect(reasonOf(() => verifyWebhook(body, signed(SECRET, body, 1_699_990_000), SECRET, { now }))).toBe('stale');
  });

  it('refuses tampering, a wrong secret and incomplete headers', () => {
    const now = at(1_700_000_000);
    const headers = signed(SECRET);
    expect(reasonOf(() => verifyWebhook(body.replace('e-1', 'e-2'), headers, SECRET, { now }))).toBe('bad_signature');
    expect(reasonOf(() => verifyWebhook(body, { ...headers, 'webhook-id': 'msg_2' }, SECRET, { now }))).toBe('bad_signature');
    expect(reasonOf(() => verifyWebhook(body, { ...headers, 'webhook-timestamp': '1700000001' }, SECRET, { now }))).toBe('bad_signature');
    expect(reasonOf(() => verifyWebhook(body, { ...headers, 'webhook-timestamp': 'soon' }, SECRET, { now }))).toBe('bad_signature');
    expect(reasonOf(() => verifyWebhook(body, headers, 'another-secret-0123456789abcdef', { now }))).toBe('bad_signature');
    expect(reasonOf(() => verifyWebhook(body, signed(WHSEC), WHSEC.replace(/^whsec_/, ''), { now }))).toBe('bad_signature');
    const { 'webhook-id': _id, ...noId } = headers;
    expect(reasonOf(() => verifyWebhook(body, noId, SECRET, { now }))).toBe('missing_signature');
    expect(reasonOf(() => verifyWebhook(body, {}, SECRET, { now }))).toBe('missing_signature');
    // A valid Standard signature over something that is not a batch.
    expect(reasonOf(() => verifyWebhook('{"hello":1}', signed(SECRET, '{"hello":1}'), SECRET, { now }))).toBe('malformed_body');
  });
});
