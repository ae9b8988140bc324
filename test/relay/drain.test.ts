// POST /internal/v1/drain in-process (createApp, a real worker): the relay refuses new routers with
// DRAINING while the open room keeps working, /readyz answers 503, the account API keeps answering,
// relay.draining is published once, and a repeated drain answers 200 without publishing again.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import { INTERNAL_BODY_LIMIT } from '../../src/app.js';
import { infoSchema } from '../../src/relay/contract/service.js';
import { answerOf, anyJson, contentType, expectRelayAnswer, fuzzParameters, headerValueOf, rawBody, requestInit } from '../reliability/support/fuzz.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, relay } from './support.js';

allowSlowTests();

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ MEDIASOUP_WORKERS: '1' });
});
afterAll(() => t.close());

async function metric(name: string): Promise<number | undefined> {
  const text = await (await t.app.request('/internal/metrics', { headers: { 'X-Internal-Token': t.internalToken } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('POST /internal/v1/drain', () => {
  it('requires the internal token', async () => {
    const res = await t.app.request('/internal/v1/drain', { method: 'POST' });
    expect(res.status).toBe(401);
    expect(t.media.draining).toBe(false);
  });

  it('stops new routers only: the open room goes on, /readyz 503, relay.draining once, idempotent', async () => {
    const api = relay(t);
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    const producer = await api.producer(send.id, 'audio');
    expect((await t.app.request('/readyz')).status).toBe(200);
    expect(await metric('media_relay_draining')).toBe(0);
    const subscription = t.events.bus.subscribe();

    const first = await api.post('/internal/v1/drain');
    expect(first).toEqual({ status: 202, body: { draining: true, routers: 1 } });

    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { relay: 'draining' } });
    // The account API still answers (a validation error, not a 503).
    const login = await t.app.request('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(login.status).toBe(400);

    const refused = await api.post('/internal/v1/routers', {});
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ code: 'DRAINING', message: expect.stringContaining('draining'), details: { routers: 1 } });

    // The open router still takes transports, producers and consumers.
    const second = await api.transport(router.id, 'send');
    await api.producer(second.id, 'audio');
    const consumer = await api.consumer(recv.id, producer.id, router.rtpCapabilities);
    expect(consumer.id).toEqual(expect.any(String));

    expect(await metric('media_relay_draining')).toBe(1);
    const again = await api.post('/internal/v1/drain');
    expect(again).toEqual({ status: 200, body: { draining: true, routers: 1 } });
    // The typed client: the same answer, and DRAINING as a typed error code.
    const client = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    expect(await client.drain()).toEqual({ draining: true, routers: 1 });
    await expect(client.createRouter()).rejects.toMatchObject({ status: 503, code: 'DRAINING' });

    const info = await api.get('/internal/info');
    expect(infoSchema.safeParse(info.body).error?.issues ?? []).toEqual([]);
    expect(info.body.draining).toBe(true);
    expect(info.body.workers[0].counts).toEqual({ routers: 1, transports: 3, producers: 2, consumers: 1, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 });

    const types: string[] = [];
    for (let event = subscription.poll(); event; event = subscription.poll()) types.push(event.type);
    subscription.close();
    expect(types.filter((type) => type === 'relay.draining')).toHaveLength(1);

    // The drain does not close anything by itself.
    expect(t.media.info().counts.routers).toBe(1);
    expect(await t.media.whenNoRouters(100)).toBe(false);
    expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(204);
    expect(await t.media.whenNoRouters(2000)).toBe(true);
  });

  it('answers hostile requests (any body, content type, token, query) with 200/202, 401 or 413, never a 5xx', async () => {
    const token = fc.oneof(fc.constant('valid'), fc.constant(undefined), headerValueOf(100), headerValueOf(8000));
    const query = fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 2000 }).map((q) => `?${encodeURIComponent(q)}`));
    const runs = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.record({ token, contentType, query, body: rawBody(anyJson, INTERNAL_BODY_LIMIT) }), async (r) => {
        const headers = { 'x-internal-token': r.token === 'valid' ? t.internalToken : r.token, 'content-type': r.contentType };
        const a = await answerOf(await t.app.request(`/internal/v1/drain${r.query}`, requestInit('POST', headers, r.body.text)));
        const what = `POST /v1/drain [${r.body.note}, token ${r.token === 'valid' ? 'valid' : 'other'}]`;
        if (a.status === 200 || a.status === 202) {
          runs.accepted++;
          expect(r.token, what).toBe('valid');
          expect(a.body, what).toEqual({ draining: true, routers: expect.any(Number) });
        } else {
          runs.refused++;
          expectRelayAnswer(a, 200, [], what);
        }
      }),
      fuzzParameters(),
    );
    expect(runs.accepted).toBeGreaterThan(0);
    expect(runs.refused).toBeGreaterThan(0);
  });
});
