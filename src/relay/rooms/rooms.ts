// A room over several workers: its parts (one mediasoup router per worker that holds some of it, all
// with the room's codecs), where its new transports go, and the copies of its producers piped from one
// part to another. Pipe objects are never registry resources and never events: the API answers the
// same whether a pipe was involved or not.
import type { types as ms } from 'mediasoup';
import type { Config } from '../../config/index.js';
import { adopt, goneError, workerDied, type EngineCall } from '../engine/call.js';
import type { WorkerPool, WorkerSlot } from '../engine/pool.js';
import { copyCodecs } from '../engine/codecs.js';
import { notFound, RelayError } from '../errors.js';
import type { CloseCause, MediaRegistry } from '../registry/registry.js';
import { roomIdOf, type ConsumerEntry, type DataConsumerEntry, type EntryOf, type PipedCopy, type ResourceKind, type RoomPart, type RouterEntry } from '../registry/kinds.js';

/** What the room functions are given: the part of the ops' deps (ops/deps.ts OpsDeps) they use. */
export interface RoomDeps {
  readonly config: Pick<Config['media'], 'workerMaxConsumers'>;
  readonly pool: WorkerPool;
  readonly registry: MediaRegistry;
  readonly rooms: RoomBook;
  readonly engine: EngineCall;
  /** The room's parts on other cluster nodes (RemoteParts), once the node attached them. */
  span?: RemoteParts | undefined;
}

export interface RoomBookOptions {
  registry: MediaRegistry;
  /** Called once per new part, after it is counted: the event bridge watches its router's close. */
  onPart: (room: RouterEntry, part: RoomPart) => void;
}

/** A room's parts on other cluster nodes (cluster/span.ts): set on a cluster node whose rooms may span nodes. */
export interface RemoteParts {
  /** Whether the room has parts on other nodes (or is a part of another node's room): its producers may be elsewhere. */
  spans(room: RouterEntry): boolean;
  /** Makes producer (or data producer) `producerId`, held by another node, consumable on `part` (a copy piped from there once); NOT_FOUND when no node holds it. */
  ensureProducer(room: RouterEntry, producerId: string, part: RoomPart, kind?: 'producer' | 'dataProducer'): Promise<PipeLease>;
  /** Brings the copies of a producer of this node on other nodes to its pause state before the API answers. */
  syncRemote(producerId: string, paused: boolean): Promise<void>;
  /** A part of another node's room: its audio producer `producerId` joins the room's speaker observers on the origin node. */
  joinSpeakers(room: RouterEntry, producerId: string): Promise<void>;
  /** Ports of RTC_MIN_PORT-RTC_MAX_PORT the pipes to and from other nodes hold (one each, made or being made). */
  portsInUse(): number;
}

/** What a lease of a piped copy gives back; releasing twice is harmless. */
export interface PipeLease {
  release(): void;
}

const NO_LEASE: PipeLease = { release: () => {} };

/** Per process: how many room parts each worker holds, and the parts being created. */
export class RoomBook {
  private readonly partsByWorker = new Map<ms.Worker, number>();
  /** `${roomId}:${slot}` → the part being created there, so that concurrent requests make one. */
  readonly creating = new Map<string, Promise<RoomPart>>();

  constructor(private readonly options: RoomBookOptions) {}

  addPart(room: RouterEntry, part: RoomPart): void {
    room.parts.set(part.worker, part);
    this.partsByWorker.set(part.worker, (this.partsByWorker.get(part.worker) ?? 0) + 1);
    this.options.onPart(room, part);
  }

  /**
   * Forgets a part whose router closed, and the copies piped to it; the room is indexed under its
   * oldest live part from then on. Returns whether the room has parts left.
   */
  dropPart(room: RouterEntry, part: RoomPart): boolean {
    if (room.parts.get(part.worker) === part) {
      room.parts.delete(part.worker);
      const left = (this.partsByWorker.get(part.worker) ?? 1) - 1;
      if (left > 0) this.partsByWorker.set(part.worker, left);
      else this.partsByWorker.delete(part.worker);
      for (const copies of room.pipes.values()) copies.delete(part.worker);
    }
    const next = room.parts.values().next().value;
    if (next) this.options.registry.rehome(room, next.worker, next.slot);
    return room.parts.size > 0;
  }

  /** Room parts (mediasoup routers) on a worker: what a new room's placement weighs. */
  partsOn(worker: ms.Worker): number {
    return this.partsByWorker.get(worker) ?? 0;
  }

  /** Told of each room that closed (its last part), after the registry forgot it: the cluster closes its parts on other nodes. */
  onRoomClosed: ((room: RouterEntry) => void) | undefined;

  /** Called by the event bridge once it has forgotten a closed resource: copies nobody needs now close. */
  afterClose<K extends ResourceKind>(kind: K, entry: EntryOf[K]): void {
    const { registry } = this.options;
    if (kind === 'router') this.onRoomClosed?.(entry as RouterEntry);
    if (kind === 'consumer' || kind === 'dataConsumer') {
      const consumer = entry as ConsumerEntry | DataConsumerEntry;
      const room = registry.get('router', consumer.routerId);
      const producerId = 'producerId' in consumer ? consumer.producerId : consumer.dataProducerId;
      if (room) this.releaseIfUnused(room, producerId, consumer.worker);
    } else if (kind === 'producer' || kind === 'dataProducer') {
      // mediasoup closes the pipe consumers with their producer, and each copy with its pipe consumer.
      const { routerId } = entry as EntryOf['producer'];
      const id = (entry as EntryOf['producer']).producer?.id ?? (entry as EntryOf['dataProducer']).dataProducer.id;
      registry.get('router', routerId)?.pipes.delete(id);
    }
  }

  /** Closes the copy of `producerId` on `worker` unless a lease or a consumer there still needs it. */
  releaseIfUnused(room: RouterEntry, producerId: string, worker: ms.Worker): void {
    const copies = room.pipes.get(producerId);
    const copy = copies?.get(worker);
    if (!copies || !copy || copy.holds > 0) return;
    const users = copy.kind === 'producer' ? 'consumer' : 'dataConsumer';
    if (this.options.registry.children(copy.kind, producerId, users).some((user) => user.worker === worker)) return;
    copies.delete(worker);
    if (copies.size === 0) room.pipes.delete(producerId);
    copy.pipeConsumer?.close();
  }
}

/** The room is closing: the relay recorded a cause on its router (API close, shutdown). */
export function roomClosing(registry: MediaRegistry, room: RouterEntry): boolean {
  return registry.closeCauseOf(room.router) !== undefined;
}

/** A live part: its router open and its worker still the one of its slot. */
function isLive(deps: RoomDeps, part: RoomPart): boolean {
  return !part.router.closed && deps.pool.slots[part.slot]?.worker === part.worker;
}

/**
 * Where a new transport of the room goes: its least-loaded part while that worker carries fewer
 * than MEDIASOUP_WORKER_MAX_CONSUMERS consumers; past that, the live worker with the fewest consumers,
 * the room's router being created there if it has none yet.
 */
export async function placeTransport(deps: RoomDeps, room: RouterEntry): Promise<RoomPart> {
  const { pool, registry, config } = deps;
  const load = (worker: ms.Worker) => registry.countOn(worker, 'consumer');
  let home: RoomPart | undefined;
  for (const part of room.parts.values()) {
    if (isLive(deps, part) && (!home || load(part.worker) < load(home.worker))) home = part;
  }
  if (home && load(home.worker) < config.workerMaxConsumers) return home;
  let best: WorkerSlot | undefined;
  for (const slot of pool.live()) if (!best || load(slot.worker!) < load(best.worker!)) best = slot;
  if (!best) throw new RelayError('MEDIASOUP_ERROR', 'no live media worker');
  if (home && load(home.worker) <= load(best.worker!)) return home;
  return partOn(deps, room, best);
}

/** The room's part on `slot`'s worker, created (once, however many ask at the same time) if missing. */
export async function partOn(deps: RoomDeps, room: RouterEntry, slot: WorkerSlot): Promise<RoomPart> {
  const existing = room.parts.get(slot.worker!);
  if (existing) return existing;
  const key = `${roomIdOf(room)}:${slot.index}`;
  let pending = deps.rooms.creating.get(key);
  if (!pending) {
    pending = createPart(deps, room, slot).finally(() => deps.rooms.creating.delete(key));
    deps.rooms.creating.set(key, pending);
  }
  return pending;
}

async function createPart(deps: RoomDeps, room: RouterEntry, slot: WorkerSlot): Promise<RoomPart> {
  const { registry, engine } = deps;
  const worker = slot.worker!;
  const roomId = roomIdOf(room);
  const router = await engine(
    'create router',
    // The engine normalises codecs in place: each part gets its own copy of the room's.
    () => worker.createRouter({ mediaCodecs: copyCodecs(room.mediaCodecs), appData: { roomId } }),
    [['router', roomId]],
    worker,
  );
  return adopt(router, () => {
    if (router.closed || slot.worker !== worker) throw workerDied('create router', worker);
    if (registry.get('router', roomId) !== room || roomClosing(registry, room)) throw notFound('router', roomId);
    const part: RoomPart = { router, worker, slot: slot.index };
    deps.rooms.addPart(room, part);
    return part;
  });
}

/**
 * Makes producer (or data producer) `producerId` consumable on `target`, a part of its own room or
 * that part's mediasoup router: pipes it there once (Router.pipeToRouter, which keeps its id) and
 * reuses that copy for every later caller. The copy stays while the lease is held or a consumer on
 * that worker uses it, and closes with the producer; pause and resume reach it through mediasoup's
 * own link between the pipe consumer and the copy. On the producer's own worker nothing is piped.
 * @example const lease = await ensureProducerOn(deps, producerId, part); try { consume… } finally { lease.release() }
 */
export async function ensureProducerOn(
  deps: RoomDeps,
  producerId: string,
  target: RoomPart | ms.Router,
  kind: 'producer' | 'dataProducer' = 'producer',
): Promise<PipeLease> {
  const { registry, rooms } = deps;
  const source = registry.require(kind, producerId);
  const room = registry.require('router', source.routerId);
  const part = 'worker' in target ? target : [...room.parts.values()].find((p) => p.router === target);
  if (!part || room.parts.get(part.worker) !== part) {
    throw new RelayError('MEDIASOUP_ERROR', `the target router is not a part of room ${roomIdOf(room)}`, { routerId: roomIdOf(room) });
  }
  if (part.worker === source.worker) return NO_LEASE;
  return leaseCopy(rooms, room, producerId, kind, part, (copy) => pipe(deps, room, copy, source.worker));
}

/**
 * A lease of the copy of `producerId` on `part` (one per worker of the room, however many ask at once),
 * made by `make` when there is none or the one there closed. The copy stays while a lease is held or a
 * consumer on that worker uses it (RoomBook.releaseIfUnused); a copy that could not be made is forgotten.
 * Shared by the copies between workers (pipe, below) and between cluster nodes (cluster/span.ts).
 */
export async function leaseCopy(
  rooms: RoomBook,
  room: RouterEntry,
  producerId: string,
  kind: 'producer' | 'dataProducer',
  part: RoomPart,
  make: (copy: PipedCopy) => Promise<void>,
): Promise<PipeLease> {
  let copies = room.pipes.get(producerId);
  if (!copies) room.pipes.set(producerId, (copies = new Map<ms.Worker, PipedCopy>()));
  let copy = copies.get(part.worker);
  if (copy?.pipeConsumer?.closed) {
    copies.delete(part.worker);
    copy = undefined;
  }
  if (!copy) {
    const made: PipedCopy = { producerId, kind, target: part, holds: 0, pipeConsumer: undefined, pipeProducer: undefined, ready: Promise.resolve() };
    (made as { ready: Promise<void> }).ready = make(made).catch((error: unknown) => {
      if (room.pipes.get(producerId)?.get(part.worker) === made) room.pipes.get(producerId)!.delete(part.worker);
      throw error;
    });
    copies.set(part.worker, (copy = made));
  }
  const held = copy;
  held.holds++;
  let released = false;
  const lease: PipeLease = {
    release() {
      if (released) return;
      released = true;
      held.holds--;
      rooms.releaseIfUnused(room, producerId, part.worker);
    },
  };
  try {
    await held.ready;
  } catch (error) {
    lease.release();
    throw error;
  }
  return lease;
}

async function pipe(deps: RoomDeps, room: RouterEntry, copy: PipedCopy, sourceWorker: ms.Worker): Promise<void> {
  const { registry, engine } = deps;
  const { producerId, kind, target } = copy;
  const sourcePart = room.parts.get(sourceWorker);
  if (!sourcePart) throw goneError(kind, producerId, sourceWorker, 'pipe producer');
  const result = await engine(
    'pipe producer',
    () =>
      sourcePart.router.pipeToRouter(
        kind === 'producer' ? { producerId, router: target.router } : { dataProducerId: producerId, router: target.router },
      ),
    [
      [kind, producerId],
      ['router', roomIdOf(room)],
    ],
    sourceWorker,
  );
  const pipeConsumer = result.pipeConsumer ?? result.pipeDataConsumer;
  if (!pipeConsumer) throw new RelayError('MEDIASOUP_ERROR', 'the engine piped nothing: pipe producer');
  copy.pipeConsumer = pipeConsumer;
  copy.pipeProducer = result.pipeProducer ?? result.pipeDataProducer;
  if (target.router.closed) {
    pipeConsumer.close();
    throw goneError('router', roomIdOf(room), target.worker, 'pipe producer');
  }
  if (pipeConsumer.closed || !registry.has(kind, producerId)) {
    pipeConsumer.close();
    throw notFound(kind, producerId);
  }
}

/**
 * Brings the copies of a producer that was just paused or resumed to the same state before the API
 * answers (mediasoup's own link does it too, but only once the worker's notification is back): a
 * consumer created right after the answer then starts with the right producerPaused on any worker.
 */
export async function syncCopies(deps: RoomDeps, roomId: string, producerId: string, paused: boolean): Promise<void> {
  const copies = deps.registry.get('router', roomId)?.pipes.get(producerId);
  await Promise.all(
    [...(copies?.values() ?? [])].map(async (copy) => {
      await copy.ready.catch(() => {});
      const copied = copy.pipeProducer;
      if (!copied || copied.closed) return;
      // A copy that closes meanwhile is no failure of the producer's own pause.
      await deps.engine(paused ? 'pause piped copy' : 'resume piped copy', () => (paused ? copied.pause!() : copied.resume!()), [], copy.target.worker).catch(() => {});
    }),
  );
  await deps.span?.syncRemote(producerId, paused);
}

/**
 * Closes a room on every worker: its transports first (mediasoup 3.11's WebRtcServer forgets a
 * transport only on its own close), then every part's router, which takes the pipes with it.
 */
export function closeRoom(registry: MediaRegistry, room: RouterEntry, cause: CloseCause): void {
  registry.markClosing(room.router, cause);
  for (const entry of registry.children('router', roomIdOf(room), 'transport')) {
    if (cause === 'shutdown') registry.markClosing(entry.transport, 'shutdown');
    entry.transport.close();
  }
  for (const part of [...room.parts.values()]) part.router.close();
}

/** The room's part on `worker`; MEDIASOUP_ERROR when the room holds nothing there (its worker died). */
export function requirePart(room: RouterEntry, worker: ms.Worker, operation: string): RoomPart {
  const part = room.parts.get(worker);
  if (!part) throw workerDied(operation, worker);
  return part;
}
