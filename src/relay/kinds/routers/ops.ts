// Routers: one per room, placed on the least-loaded live worker; the room may spread to other workers
// later (src/relay/rooms/), its id staying the one of its first router.
import type { types as ms } from 'mediasoup';
import { adopt } from '../../engine/call.js';
import { copyCodecs, DEFAULT_MEDIA_CODECS, type RouterMediaCodec } from '../../engine/codecs.js';
import { RelayError } from '../../errors.js';
import type { CreateRouterBody } from './contract.js';
import { roomIdOf, roomStateKindsOf, type ConsumerEntry, type DataConsumerEntry, type DataProducerEntry, type EntryOf, type ProducerEntry, type RoomStateKind, type RouterEntry, type TransportEntry } from '../../registry/kinds.js';
import type { OpsDeps } from '../../ops/deps.js';
import { closeRoom } from '../../rooms/rooms.js';
import { startSpeakerDetection } from '../../ops/speakers.js';

export async function createRouter(deps: OpsDeps, input: CreateRouterBody): Promise<ms.Router> {
  const { registry } = deps;
  if (deps.draining()) throw new RelayError('DRAINING', 'the relay is draining: create the room on another relay', { routers: registry.count('router') });
  // Kept as given: every later part of the room is created with the same codecs (the engine
  // normalises them in place, so each router gets its own copy).
  const mediaCodecs = copyCodecs((input.mediaCodecs ?? DEFAULT_MEDIA_CODECS) as readonly RouterMediaCodec[]);
  const entry = await makeRoom(deps, { mediaCodecs, ...(input.appData ? { appData: input.appData } : {}) });
  // A room whose speaker detection could not start is closed, never left half-made.
  if (input.speakerDetection) {
    await startSpeakerDetection(deps, entry, input.speakerDetection).catch((error: unknown) => {
      closeRoom(registry, entry, 'api');
      throw error;
    });
  }
  return entry.router;
}

/**
 * A room's first router on the least-loaded live worker, registered: a new room, or (with `origin`) this
 * node's part of another node's room (cluster/span.ts). Counted against MEDIASOUP_MAX_ROUTERS either way:
 * a part is a router of this node's workers.
 */
export async function makeRoom(deps: OpsDeps, room: { mediaCodecs: RouterMediaCodec[]; appData?: Record<string, unknown>; origin?: RouterEntry['origin'] }): Promise<RouterEntry> {
  const { config, logger, registry, placement, engine } = deps;
  const pending = placement.pending();
  const open = registry.count('router');
  if (open + pending >= config.maxRouters) {
    logger.warn({ maxRouters: config.maxRouters, open, pending }, 'router limit reached; router refused');
    throw new RelayError('ROUTER_LIMIT_EXCEEDED', `router limit reached: ${config.maxRouters}`, { maxRouters: config.maxRouters });
  }
  const slot = placement.place();
  const worker = slot.worker!;
  const { mediaCodecs, appData, origin } = room;
  const router = await placement.reserve(slot, () => engine('create router', () => worker.createRouter({ mediaCodecs: copyCodecs(mediaCodecs), ...(appData ? { appData } : {}) }), [], worker));
  return adopt(router, () => {
    if (router.closed || slot.worker !== worker) throw new RelayError('MEDIASOUP_ERROR', 'media worker died during the request: create router', { workerPid: worker.pid });
    const entry = registry.add('router', { router, worker, slot: slot.index, createdAt: new Date(), mediaCodecs, parts: new Map(), pipes: new Map(), ...(origin ? { origin } : {}) });
    deps.rooms.addPart(entry, { router, worker, slot: slot.index });
    return entry;
  });
}

/** Closes the room on every worker it spread to, and every pipe between its parts. */
export function closeRouter(deps: OpsDeps, id: string): void {
  closeRoom(deps.registry, deps.registry.require('router', id), 'api');
}

/**
 * Every open router, oldest first: what a signaling server rebuilds its map from after a restart.
 * Bounded by MEDIASOUP_MAX_ROUTERS.
 */
export function listRouters(deps: OpsDeps): RouterSummary[] {
  // A part of another node's room is that node's to list.
  return [...deps.registry.all('router')].filter((entry) => !entry.origin).map((entry) => summaryOf(deps, entry));
}

/** A router and how much its room holds. */
export interface RouterSummary {
  entry: RouterEntry;
  counts: { transports: number; producers: number; consumers: number; dataProducers: number; dataConsumers: number };
}

/** A router and everything in it: its transports, each with its producers and its consumers. */
export interface RouterState extends RouterSummary {
  transports: {
    entry: TransportEntry;
    producers: ProducerEntry[];
    consumers: ConsumerEntry[];
    dataProducers: DataProducerEntry[];
    dataConsumers: DataConsumerEntry[];
  }[];
  /** The kinds that stand for a transport (pipe transports, plain transports, ...): each with its producers and consumers, under its kind. */
  standIns: { [K in RoomStateKind]: StandInState<K>[] };
}

/** An entry of a kind that stands for a transport, with the producers and consumers that name it as `transportId`. */
export interface StandInState<K extends RoomStateKind> {
  entry: EntryOf[K];
  producers: ProducerEntry[];
  consumers: ConsumerEntry[];
}

/** Bounded by the per-router caps (MEDIASOUP_MAX_*_PER_ROUTER). */
export function getRouter(deps: OpsDeps, id: string): RouterState {
  const { registry } = deps;
  const entry = registry.require('router', id);
  return {
    ...summaryOf(deps, entry),
    transports: registry.children('router', id, 'transport').map((transport) => ({
      entry: transport,
      producers: registry.children('transport', transport.transport.id, 'producer'),
      consumers: registry.children('transport', transport.transport.id, 'consumer'),
      dataProducers: registry.children('transport', transport.transport.id, 'dataProducer'),
      dataConsumers: registry.children('transport', transport.transport.id, 'dataConsumer'),
    })),
    // Their producers and consumers name it as `transportId` (kinds table: standsFor).
    standIns: Object.fromEntries(
      roomStateKindsOf(registry.kinds).map((kind) => [
        kind,
        registry.children('router', id, kind).map((entry) => {
          const transportId = (entry as unknown as Record<string, { id: string }>)[registry.kinds[kind].name]!.id;
          return { entry, producers: registry.children('transport', transportId, 'producer'), consumers: registry.children('transport', transportId, 'consumer') };
        }),
      ]),
    ) as RouterState['standIns'],
  };
}

function summaryOf({ registry }: OpsDeps, entry: RouterEntry): RouterSummary {
  const id = roomIdOf(entry);
  return {
    entry,
    counts: {
      transports: registry.countInRoom(id, 'transport'),
      producers: registry.countInRoom(id, 'producer'),
      consumers: registry.countInRoom(id, 'consumer'),
      dataProducers: registry.countInRoom(id, 'dataProducer'),
      dataConsumers: registry.countInRoom(id, 'dataConsumer'),
    },
  };
}
