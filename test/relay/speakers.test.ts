// Speaker detection of a room against a real worker: the observers made with the router, audio
// producers joining them on creation and leaving on close (the worker's own router state says so).
import * as mediasoup from 'mediasoup';
import { describe, expect, it } from 'vitest';
import { allowSlowTests, useRelayApp } from './support.js';

allowSlowTests();

const engineRouters = new Map<string, mediasoup.types.Router>();
const observersOf = new Map<string, mediasoup.types.RtpObserver[]>();
const joined: { observerId: string; producerId: string }[] = [];
mediasoup.observer.on('newworker', (worker) =>
  worker.observer.on('newrouter', (router) => {
    engineRouters.set(router.id, router);
    observersOf.set(router.id, []);
    router.observer.on('newrtpobserver', (observer) => {
      observersOf.get(router.id)!.push(observer);
      observer.observer.on('addproducer', (producer) => joined.push({ observerId: observer.id, producerId: producer.id }));
    });
  }),
);

const { api } = useRelayApp();

/** What the worker itself holds: producer id → ids of the observers it is in. */
async function observedProducers(routerId: string): Promise<Record<string, string[]>> {
  const dump = (await engineRouters.get(routerId)!.dump()) as unknown as { mapProducerIdObserverIds: Record<string, string[]> };
  // Every producer of the router has a row; those in no observer have an empty one.
  return Object.fromEntries(Object.entries(dump.mapProducerIdObserverIds).filter(([, observerIds]) => observerIds.length > 0));
}

describe('POST /internal/v1/routers with speakerDetection', () => {
  it('creates the observers; audio producers join on creation and leave on close', async () => {
    const router = await api.router({ speakerDetection: { activeSpeaker: true, audioLevels: { intervalMs: 500, thresholdDb: -70 } } });
    const observers = observersOf.get(router.id)!;
    expect(observers.map((o) => o.constructor.name).sort()).toEqual(['ActiveSpeakerObserver', 'AudioLevelObserver']);
    const send = await api.transport(router.id, 'send');
    const mic = await api.producer(send.id, 'audio');
    const camera = await api.producer(send.id, 'video');
    const otherMic = await api.producer(send.id, 'audio');
    const ids = observers.map((o) => o.id).sort();
    expect(await observedProducers(router.id)).toEqual({ [mic.id]: expect.any(Array), [otherMic.id]: expect.any(Array) });
    expect((await observedProducers(router.id))[mic.id]!.sort()).toEqual(ids);
    expect(joined.filter((j) => j.producerId === mic.id).map((j) => j.observerId).sort()).toEqual(ids);
    expect(joined.some((j) => j.producerId === camera.id)).toBe(false);

    expect((await api.del(`/internal/v1/producers/${mic.id}`)).status).toBe(204);
    await expect.poll(() => observedProducers(router.id)).toEqual({ [otherMic.id]: expect.any(Array) });
    // Leaving with the transport too.
    expect((await api.del(`/internal/v1/transports/${send.id}`)).status).toBe(204);
    await expect.poll(() => observedProducers(router.id)).toEqual({});
    // The observers close with their router.
    expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(204);
    expect(observers.every((o) => o.closed)).toBe(true);
  });

  it('only the observers asked for; none without speakerDetection', async () => {
    const levelsOnly = await api.router({ speakerDetection: { audioLevels: { intervalMs: 100, thresholdDb: -127 } } });
    expect(observersOf.get(levelsOnly.id)!.map((o) => o.constructor.name)).toEqual(['AudioLevelObserver']);
    const plain = await api.router({});
    expect(observersOf.get(plain.id)).toEqual([]);
    const send = await api.transport(plain.id, 'send');
    const mic = await api.producer(send.id, 'audio');
    expect(await observedProducers(plain.id)).toEqual({});
    expect(joined.some((j) => j.producerId === mic.id)).toBe(false);
  });

  it('bounds speakerDetection', async () => {
    const cases: [unknown, string][] = [
      [{ audioLevels: { intervalMs: 99, thresholdDb: -50 } }, 'speakerDetection.audioLevels.intervalMs'],
      [{ audioLevels: { intervalMs: 10_001, thresholdDb: -50 } }, 'speakerDetection.audioLevels.intervalMs'],
      [{ audioLevels: { intervalMs: 500, thresholdDb: 1 } }, 'speakerDetection.audioLevels.thresholdDb'],
      [{ audioLevels: { intervalMs: 500, thresholdDb: -128 } }, 'speakerDetection.audioLevels.thresholdDb'],
      [{ audioLevels: { intervalMs: 500 } }, 'speakerDetection.audioLevels.thresholdDb'],
      [{ activeSpeaker: 'yes' }, 'speakerDetection.activeSpeaker'],
      ['on', 'speakerDetection'],
    ];
    const before = (await api.get('/internal/info')).body.counts.routers;
    for (const [speakerDetection, path] of cases) {
      const res = await api.post('/internal/v1/routers', { speakerDetection });
      expect(res.status, path).toBe(400);
      expect(res.body.details.issues.map((i: { path: string }) => i.path), path).toContain(path);
    }
    expect((await api.get('/internal/info')).body.counts.routers).toBe(before);
  });
});
