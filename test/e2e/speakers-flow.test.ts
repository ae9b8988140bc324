// Speaker events from real audio: two werift peers send opus whose RTP packets carry the
// ssrc-audio-level header extension (RFC 6464) into a room created with speaker detection; the
// app's own event stream, over real HTTP, must name the one who speaks (router.activeSpeaker with
// that producer's id and appData, router.audioLevels with its volume) and report router.silence
// once nobody does; when the other one speaks, the active speaker changes to them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import { relayStreamEventSchema, type RelayStreamEvent } from '../../src/relay/contract/events.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { SendPeer, type AudioLevel } from '../support/webrtc/peer.js';
import { openStream, serveApp, type AppServer, type SseReader } from '../events/support.js';

/** -dBov levels of the header extension: 0 is the loudest, 127 digital silence. */
const LOUD = 20;
/** A quiet room's background: below the threshold, and the floor the dominant-speaker detection measures speech against. */
const NOISE = 110;
/**
 * Speech as mediasoup's dominant-speaker detection reads it (levels above each speaker's own noise
 * floor, which it learns from the first packets): a short pause at the room's noise, then words with
 * levels varying around LOUD, 50 packets a second. Pauses are short enough that no 300 ms interval of
 * the level observer averages below the threshold.
 */
const SPEAKING = (i: number) => (i % 40 < 5 ? NOISE : LOUD + ((i * 7) % 11));
const THRESHOLD_DB = -70;

describe('speaker events from real audio', () => {
  let t: TestApp;
  let server: AppServer;
  let relay: RelayClient;
  const cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    t = await buildTestApp();
    server = await serveApp(t);
    relay = createRelayClient({ baseUrl: server.url, token: t.internalToken });
  });
  afterAll(async () => {
    for (const f of cleanups.reverse()) await Promise.resolve(f()).catch(() => {});
    await server?.close();
    await t?.close();
  });

  type Ev = RelayStreamEvent & Record<string, any>;
  const events = (reader: SseReader): Ev[] => reader.frames.map((f) => relayStreamEventSchema.parse(JSON.parse(f.data)) as Ev);
  const ofType = (reader: SseReader, type: string, from = 0) => events(reader).slice(from).filter((e) => e.type === type);

  /** A connected peer sending audio only (20 ms packets) at `level`, and its producer. */
  async function speaker(routerId: string, user: string, level: AudioLevel) {
    const transport = await relay.createTransport({ routerId, direction: 'send' });
    const peer = await SendPeer.create(transport, { audioLevel: level });
    await relay.connectTransport(transport.id, peer.dtlsParameters);
    await peer.connected();
    const producer = await relay.createProducer({ transportId: transport.id, kind: 'audio', rtpParameters: peer.rtpParameters.audio, appData: { user } });
    const timer = setInterval(() => peer.sendAudio(), 20);
    cleanups.push(() => clearInterval(timer), () => peer.close());
    return { peer, producer };
  }

  it('router.activeSpeaker and router.audioLevels name the producer that speaks, router.silence follows when nobody does', { timeout: 60_000 }, async () => {
    const router = await relay.createRouter({
      appData: { room: 'speakers' },
      speakerDetection: { activeSpeaker: true, audioLevels: { intervalMs: 300, thresholdDb: THRESHOLD_DB } },
    });
    const controller = new AbortController();
    cleanups.push(() => controller.abort());
    const { reader } = await openStream(server.url, { query: `?routerId=${router.id}`, token: t.internalToken, signal: controller.signal });

    // Bob joins first and says nothing (alone, he is the active speaker at first); then Alice speaks.
    const bob = await speaker(router.id, 'bob', NOISE);
    const alice = await speaker(router.id, 'alice', SPEAKING);

    // Alice becomes the active speaker, and she is the only one above the threshold.
    const namesAlice = () => ofType(reader!, 'router.activeSpeaker').some((e) => e.producerId === alice.producer.id);
    await reader!.until(namesAlice, 20_000, 'router.activeSpeaker naming alice');
    const speakers = ofType(reader!, 'router.activeSpeaker');
    expect(speakers.at(-1)).toMatchObject({ routerId: router.id, producerId: alice.producer.id, appData: { user: 'alice' } });
    expect(new Set(speakers.map((e) => e.producerId))).toEqual(new Set(speakers.length > 1 ? [bob.producer.id, alice.producer.id] : [alice.producer.id]));
    await reader!.until(() => ofType(reader!, 'router.audioLevels').length >= 2, 10_000, 'router.audioLevels');
    for (const levels of ofType(reader!, 'router.audioLevels')) {
      expect(levels.routerId).toBe(router.id);
      expect(levels.volumes).toEqual([{ producerId: alice.producer.id, volume: expect.any(Number), appData: { user: 'alice' } }]);
      // The interval's average of what she sent: between her loudest word and a pause.
      expect(levels.volumes[0].volume).toBeLessThanOrEqual(-LOUD);
      expect(levels.volumes[0].volume).toBeGreaterThan(THRESHOLD_DB);
    }

    // Nobody speaks: router.silence, and no more levels after it.
    alice.peer.setAudioLevel(NOISE);
    await reader!.until(() => ofType(reader!, 'router.silence').length > 0, 10_000, 'router.silence');
    expect(ofType(reader!, 'router.silence')[0]).toMatchObject({ routerId: router.id });

    // Bob speaks: the active speaker changes to him, and the levels name him.
    const mark = reader!.frames.length;
    bob.peer.setAudioLevel(SPEAKING);
    await reader!.until(() => ofType(reader!, 'router.activeSpeaker', mark).length > 0, 20_000, 'the active speaker to change');
    expect(ofType(reader!, 'router.activeSpeaker', mark)[0]).toMatchObject({ producerId: bob.producer.id, appData: { user: 'bob' } });
    await reader!.until(() => ofType(reader!, 'router.audioLevels', mark).length > 0, 10_000, "bob's levels");
    expect(ofType(reader!, 'router.audioLevels', mark).at(-1)!.volumes).toEqual([{ producerId: bob.producer.id, volume: expect.any(Number), appData: { user: 'bob' } }]);

    // Every speaker event concerned this room only.
    for (const e of events(reader!).filter((e) => e.type.startsWith('router.'))) expect(e.routerId).toBe(router.id);
    await relay.closeRouter(router.id);
  });
});
