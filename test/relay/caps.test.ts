// Per-router caps (MEDIASOUP_MAX_*_PER_ROUTER): a burst of concurrent creations never takes a router past
// its cap, the refused ones answer ROUTER_CAPACITY_EXCEEDED 429, other routers are not affected, a
// close frees a place, and /internal/info reports the limits and the fullest router.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, opusParameters, relay, type Answer } from './support.js';

allowSlowTests();

const MAX = { transports: 3, producers: 2, consumers: 2 };
const BURST = 12;

let t: TestApp;
let api: ReturnType<typeof relay>;
beforeAll(async () => {
  t = await buildTestApp({
    MEDIASOUP_MAX_TRANSPORTS_PER_ROUTER: String(MAX.transports),
    MEDIASOUP_MAX_PRODUCERS_PER_ROUTER: String(MAX.producers),
    MEDIASOUP_MAX_CONSUMERS_PER_ROUTER: String(MAX.consumers),
  }, { areas: { accounts: false } });
  api = relay(t);
});
afterAll(() => t.close());

/** `places` of the burst were free: that many created, the rest refused naming the cap `max`. */
function expectCapped(answers: Answer[], places: number, max: number, resource: string, routerId: string) {
  const created = answers.filter((a) => a.status === 201);
  const refused = answers.filter((a) => a.status !== 201);
  expect(created).toHaveLength(places);
  for (const a of refused) {
    expect(a.status).toBe(429);
    expect(a.body).toEqual({ code: 'ROUTER_CAPACITY_EXCEEDED', message: expect.stringContaining(String(max)), details: { routerId, resource, max } });
  }
}

describe('per-router caps', () => {
  it('a burst of concurrent transport creations never exceeds MEDIASOUP_MAX_TRANSPORTS_PER_ROUTER', async () => {
    const router = await api.router();
    const burst = await Promise.all(
      Array.from({ length: BURST }, (_, i) => api.post('/internal/v1/transports', { routerId: router.id, direction: i % 2 ? 'send' : 'recv' })),
    );
    expectCapped(burst, MAX.transports, MAX.transports, 'transport', router.id);
    expect(t.media.info().largestRouter.transports).toBe(MAX.transports);

    // Another router has its own cap.
    const other = await api.router();
    expect((await api.post('/internal/v1/transports', { routerId: other.id, direction: 'send' })).status).toBe(201);

    // A close frees a place, and only one.
    const victim = burst.find((a) => a.status === 201)!.body.id as string;
    expect((await api.del(`/internal/v1/transports/${victim}`)).status).toBe(204);
    const again = await Promise.all([0, 1, 2].map(() => api.post('/internal/v1/transports', { routerId: router.id, direction: 'recv' })));
    expectCapped(again, 1, MAX.transports, 'transport', router.id);
    await api.del(`/internal/v1/routers/${router.id}`);
    await api.del(`/internal/v1/routers/${other.id}`);
  });

  it('a burst of producers and of consumers stops at the caps; /internal/info shows limits and the fullest router', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    const producers = await Promise.all(
      Array.from({ length: BURST }, () => api.post('/internal/v1/producers', { transportId: send.id, kind: 'audio', rtpParameters: opusParameters() })),
    );
    expectCapped(producers, MAX.producers, MAX.producers, 'producer', router.id);

    const producerId = producers.find((a) => a.status === 201)!.body.id as string;
    const consumers = await Promise.all(
      Array.from({ length: BURST }, () =>
        api.post('/internal/v1/consumers', { transportId: recv.id, producerId, rtpCapabilities: router.rtpCapabilities }),
      ),
    );
    expectCapped(consumers, MAX.consumers, MAX.consumers, 'consumer', router.id);

    const info = await api.get('/internal/info');
    expect(info.body.limits).toMatchObject({
      maxTransportsPerRouter: MAX.transports,
      maxProducersPerRouter: MAX.producers,
      maxConsumersPerRouter: MAX.consumers,
    });
    expect(info.body.largestRouter).toEqual({ transports: 2, producers: MAX.producers, consumers: MAX.consumers });
    expect(info.body.counts).toMatchObject({ producers: MAX.producers, consumers: MAX.consumers });
    await api.del(`/internal/v1/routers/${router.id}`);
    expect((await api.get('/internal/info')).body.largestRouter).toEqual({ transports: 0, producers: 0, consumers: 0 });
  });
});
