// Speaker detection of a room: mediasoup's ActiveSpeakerObserver and AudioLevelObserver, created with
// the router (closed with it by the engine) and joined by every audio producer of the router. A
// producer leaves them when it closes: the worker removes a closed producer from its router's observers.
// In a room that spans cluster nodes, the observers are the origin's: another node's audio producers
// are copied there (cluster/span.ts joinOriginSpeakers).
import type { types as ms } from 'mediasoup';
import { SPEAKER_BOUNDS, type SpeakerDetection } from '../contract/speakers.js';
import type { Needs } from '../engine/call.js';
import type { RoomPart, RouterEntry } from '../registry/kinds.js';
import { ensureProducerOn } from '../rooms/rooms.js';
import type { OpsDeps } from './deps.js';

/** Creates the observers `detection` asks for and keeps them on the router's entry. */
export async function startSpeakerDetection(deps: OpsDeps, entry: RouterEntry, detection: SpeakerDetection): Promise<void> {
  const { router } = entry;
  const needs: [['router', string]] = [['router', router.id]];
  const speakers: NonNullable<RouterEntry['speakers']> = {};
  entry.speakers = speakers;
  if (detection.activeSpeaker) {
    speakers.activeSpeaker = await deps.engine('create active speaker observer', () => router.createActiveSpeakerObserver(), needs);
  }
  if (detection.audioLevels) {
    const { intervalMs, thresholdDb } = detection.audioLevels;
    speakers.audioLevels = await deps.engine(
      'create audio level observer',
      () => router.createAudioLevelObserver({ interval: intervalMs, threshold: thresholdDb, maxEntries: SPEAKER_BOUNDS.maxEntries }),
      needs,
    );
  }
}

/** Adds an audio producer to its router's observers (none when the room has no speaker detection). */
export async function joinSpeakerDetection(deps: OpsDeps, producer: ms.Producer, routerId: string): Promise<void> {
  if (producer.kind !== 'audio') return;
  const room = deps.registry.get('router', routerId);
  // A part of another node's room: the observers are on the room's origin node, which copies the producer there.
  if (room?.origin) {
    if (room.origin.speakers) await deps.span?.joinSpeakers(room, producer.id);
    return;
  }
  if (!room?.speakers) return;
  // A producer on another worker is piped to the observers' part first; the copy is kept (its lease never
  // released) until the producer closes.
  await observeSpeaker(deps, room, producer.id, (part) => ensureProducerOn(deps, producer.id, part), [
    ['router', routerId],
    ['producer', producer.id],
  ]);
}

/**
 * Adds `producerId` to the room's speaker observers, which live on the room's first router, once `copy`
 * made it consumable there (from another worker, or from another cluster node: span.ts). False when the
 * room's first router is gone (no observers left to join).
 */
export async function observeSpeaker(deps: Pick<OpsDeps, 'engine'>, room: RouterEntry, producerId: string, copy: (part: RoomPart) => Promise<unknown>, needs: Needs): Promise<boolean> {
  const observersPart = room.parts.get(room.worker);
  if (room.router.closed || !observersPart || observersPart.router !== room.router) return false;
  await copy(observersPart);
  for (const observer of [room.speakers?.activeSpeaker, room.speakers?.audioLevels]) {
    if (!observer || observer.closed) continue;
    await deps.engine('add producer to speaker observer', () => observer.addProducer({ producerId }), needs, observersPart.worker);
  }
  return true;
}
