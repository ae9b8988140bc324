// The webhook's give-up (issue 39): a receiver that answers 500 gets a batch until
// EVENTS_WEBHOOK_GIVE_UP_S has passed; the batch is then parked (listed, counted), the cursor moves
// past it (the next events go out), and once the receiver recovers a redelivery on request sends the
// same events under the same webhook-id.
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerEventMetrics } from '../../src/events/metrics.js';
import { verifyWebhook } from '../../src/client/relay-client.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../events/support.js';
import { Receiver } from '../events/webhook-receiver.js';

const SECRET = 'webhook-parked-secret-0123456789abcdef';
let t: TestApp;
let receiver: Receiver;
let refuse = true;

beforeAll(async () => {
  receiver = await new Receiver().start();
  receiver.answer = () => (refuse ? 500 : 204);
  t = await buildTestApp({ EVENTS_WEBHOOK_URL: receiver.url, EVENTS_WEBHOOK_SECRET: SECRET, EVENTS_WEBHOOK_GIVE_UP_S: '1' }, { areas: { relay: true, accounts: false } });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await receiver?.stop();
}, 60_000);

const get = (path: string) => t.app.request(path, { headers: { 'X-Internal-Token': t.internalToken } });
const post = (path: string) => t.app.request(path, { method: 'POST', headers: { 'X-Internal-Token': t.internalToken } });

interface Listed {
  deliveries: Array<{ id: string; firstEventId: string; lastEventId: string; events: number; attempts: number; lastError: string; parkedAt: string }>;
}

/** The ids of the events in the receiver's accepted batches, with each batch's webhook-id. */
function accepted(): Array<{ messageId: string; ids: string[] }> {
  return receiver.deliveries
    .filter((d) => d.status >= 200 && d.status < 300)
    .map((d) => ({ messageId: String(d.headers['webhook-id']), ids: verifyWebhook(d.raw, d.headers, SECRET).events.map((e) => e.id) }));
}

describe('webhook: give up, park, redeliver', () => {
  it('parks a batch refused for EVENTS_WEBHOOK_GIVE_UP_S, lists it, and sends it again on request', async () => {
    const first = t.events.bus.publish({ type: 'router.closed', routerId: 'parked-router', appData: {}, reason: 'api' });
    void first;
    const listed = async () => ((await (await get('/internal/v1/webhook/deliveries?status=failed')).json()) as Listed).deliveries;
    await eventually(async () => (await listed()).length === 1, 15_000, 'the batch to be parked');
    const [parked] = await listed();
    expect(parked).toMatchObject({ events: 1, lastError: 'HTTP 500' });
    // Tried until the give-up (one attempt can take the whole second on a loaded machine).
    expect(parked!.attempts).toBeGreaterThanOrEqual(1);
    expect(receiver.deliveries.filter((d) => d.headers['webhook-id'] === parked!.id)).toHaveLength(parked!.attempts);
    expect(parked!.firstEventId).toBe(parked!.lastEventId);
    expect(BigInt(parked!.firstEventId) % 1_000_000n).toBe(0n);
    // Every attempt carried the batch's one webhook-id, the parked row's id.
    expect(new Set(receiver.deliveries.map((d) => d.headers['webhook-id']))).toEqual(new Set([parked!.id]));
    expect(t.events.delivery!.delivery.stats()).toMatchObject({ parked: 1 });
    const registry = new Registry();
    registerEventMetrics(registry, t.events);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/^events_webhook_parked 1$/m);
    expect(metrics).toMatch(/^events_webhook_parked_total 1$/m);
    expect(metrics).toMatch(/^events_webhook_lag_seconds 0$/m);
    expect(metrics).toMatch(/^events_log_appended_total [1-9]/m);

    // The receiver recovers: new events go out at once (the cursor moved past the parked batch).
    refuse = false;
    const next = t.events.bus.publish({ type: 'router.closed', routerId: 'after-router', appData: {}, reason: 'api' });
    void next;
    await eventually(() => accepted().length === 1, 10_000, 'the next batch');
    expect(accepted()[0]!.ids).toHaveLength(1);
    expect(BigInt(accepted()[0]!.ids[0]!)).toBeGreaterThan(BigInt(parked!.lastEventId));

    // Sent again on request: the same events under the same webhook-id.
    const redeliver = await post(`/internal/v1/webhook/deliveries/${parked!.id}/redeliver`);
    expect(redeliver.status).toBe(202);
    expect(await redeliver.json()).toMatchObject({ id: parked!.id, firstEventId: parked!.firstEventId });
    await eventually(() => accepted().some((batch) => batch.messageId === parked!.id), 10_000, 'the redelivery');
    expect(accepted().find((batch) => batch.messageId === parked!.id)!.ids).toEqual([parked!.firstEventId]);
    await eventually(async () => (await listed()).length === 0, 5_000, 'the batch to leave the failed list');

    // Asked twice, or unknown.
    const again = await post(`/internal/v1/webhook/deliveries/${parked!.id}/redeliver`);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'CONFLICT' });
    const unknown = await post('/internal/v1/webhook/deliveries/msg_nope/redeliver');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'NOT_FOUND', details: { resource: 'delivery' } });
    expect((await get('/internal/v1/webhook/deliveries?limit=0')).status).toBe(400);
    expect((await get('/internal/v1/webhook/deliveries?status=delivered')).status).toBe(400);
  }, 60_000);
});
