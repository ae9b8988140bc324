// The only subscriber to mediasoup's observers and to the worker pool's events. Each handler first
// brings the registry up to date (synchronously), then publishes the event on the bus, so a close
// caused by the API, a cascade, a worker death or the shutdown all come out the same way.
//
// A kind's close event is its row's (kinds/<family>/row.ts `closed`), and so are the other observer
// events it tells (`watch`); the `<parent>_closed` reasons follow from the rows' `parents`.
import type { types as ms } from 'mediasoup';
import type { Logger } from '../../logger.js';
import type { WorkerPool } from '../engine/pool.js';
import { roomIdOf, type CloseReason, type EntryOf, type ResourceKind, type RoomPart, type RouterEntry } from '../registry/kinds.js';
import type { MediaRegistry } from '../registry/registry.js';
import type { RoomBook } from '../rooms/rooms.js';
import type { RelayEventInput } from '../contract/events.js';
import type { RelayBus } from './index.js';

export interface EventBridgeDeps {
  /** Also where it reads the kinds' rows (`registry.kinds`): close events, reasons, other events. */
  registry: MediaRegistry;
  /** Told of every close after the registry forgot it, and of each room part's close. */
  rooms: RoomBook;
  pool: WorkerPool;
  bus: RelayBus;
  logger: Logger;
}

export interface EventBridge {
  /** Subscribes to one new entry's observers (the registry's onAdd). A room's close is watched through its parts. */
  watch<K extends ResourceKind>(kind: K, entry: EntryOf[K]): void;
  /**
   * Watches one router of a room (RoomBook's onPart): a part's close is internal, unless it was the
   * room's last part, which is the room's close.
   */
  watchPart(room: RouterEntry, part: RoomPart): void;
}

/**
 * @example
 * const registry = new MediaRegistry({ onAdd: (kind, entry) => bridge.watch(kind, entry) })
 * const rooms = new RoomBook({ registry, onPart: (room, part) => bridge.watchPart(room, part) })
 * const bridge = createEventBridge({ registry, rooms, pool, bus, logger })
 */
export function createEventBridge({ registry, rooms, pool, bus, logger }: EventBridgeDeps): EventBridge {
  /**
   * Events of resources on a worker that just died. mediasoup closes a dead worker's routers (and
   * their children) before it emits `died`: their events wait until `worker.died` has gone out, in
   * the order they happened, within the same synchronous run.
   */
  const afterDeath = new Map<ms.Worker, { routerIds: string[]; events: RelayEventInput[] }>();

  const { kinds } = registry;
  const resourceOf = registry.resourceOf.bind(registry);
  const parentIdOf = registry.parentIdOf.bind(registry);

  const publish = (input: RelayEventInput): void => {
    bus.publish(input);
  };

  function isClosing(parentKind: ResourceKind, id: string): boolean {
    // A pipe transport stands for a transport (kinds table): its producers name it as transportId.
    const found = registry.parentOf(parentKind, id);
    if (!found) return true;
    const { kind, entry } = found;
    const resource = resourceOf(kind, entry);
    if (registry.closeCauseOf(resource) !== undefined) return true;
    // A room is closing when the relay closes it or when its last part has closed, not when one of its
    // parts does (a worker holding some of it died): the rest of it goes on.
    if (kind === 'router' ? [...(entry as RouterEntry).parts.values()].every((part) => part.router.closed) : resource.closed) return true;
    return kinds[kind].parents.some((parent) => isClosing(parent, parentIdOf(entry, parent)));
  }

  function reasonOf(kind: ResourceKind, entry: EntryOf[ResourceKind]): CloseReason {
    const own = registry.closeCauseOf(resourceOf(kind, entry));
    if (own) return own;
    const parent = kinds[kind].parents.find((p) => isClosing(p, parentIdOf(entry, p)));
    if (parent) return `${snake(kinds[parent].name)}_closed`;
    if (entry.worker.died) return 'worker_died';
    if (entry.worker.closed) return 'shutdown';
    // Nothing the relay did explains it: mediasoup closed it on its own account.
    logger.warn({ kind, id: resourceOf(kind, entry).id }, 'media resource closed without a known cause');
    return 'api';
  }

  function onClose<K extends ResourceKind>(kind: K, entry: EntryOf[K]): void {
    // Read the cause while the parents are still in the registry, then forget the entry.
    const reason = reasonOf(kind, entry);
    const id = registry.idOf(kind, entry);
    registry.remove(kind, id);
    rooms.afterClose(kind, entry);
    // This node's part of another node's room: the room's own close is that node's to tell.
    if (kind === 'router' && (entry as RouterEntry).origin) return;
    const event = (kinds[kind].closed as (entry: EntryOf[K], reason: CloseReason) => RelayEventInput)(entry, reason);
    if (entry.worker.died) {
      let pending = afterDeath.get(entry.worker);
      if (!pending) {
        afterDeath.set(entry.worker, (pending = { routerIds: [], events: [] }));
        // Normally flushed by the pool's workerDied in this same run; this covers a worker the pool
        // no longer counted as its own (no workerDied then), so nothing is held back for ever.
        queueMicrotask(() => flushDeath(entry.worker, undefined));
      }
      if (kind === 'router') pending.routerIds.push(id);
      pending.events.push(event);
      return;
    }
    publish(event);
  }

  function flushDeath(worker: ms.Worker, restartInMs: number | undefined): void {
    const pending = afterDeath.get(worker) ?? { routerIds: [], events: [] };
    afterDeath.delete(worker);
    if (restartInMs !== undefined) publish({ type: 'worker.died', workerPid: worker.pid, routerIds: pending.routerIds, restartInMs });
    for (const event of pending.events) publish(event);
  }

  /** A worker that stopped with the service (Ctrl-C reached it) did not die: what it held closed by `shutdown`. */
  function flushStop(worker: ms.Worker): void {
    const pending = afterDeath.get(worker);
    afterDeath.delete(worker);
    for (const event of pending?.events ?? []) publish('reason' in event && event.reason === 'worker_died' ? { ...event, reason: 'shutdown' } : event);
  }

  pool.events.on('workerDied', (worker, slot) => {
    registry.dropWorker(worker);
    flushDeath(worker, slot.lastRestartDelayMs ?? 0);
  });
  pool.events.on('workerStopped', (worker) => {
    registry.dropWorker(worker);
    flushStop(worker);
  });
  pool.events.on('workerRestarted', (worker) => publish({ type: 'worker.restarted', workerPid: worker.pid }));

  return {
    watchPart(room, part) {
      part.router.observer.once('close', () => {
        try {
          if (!rooms.dropPart(room, part)) onClose('router', room);
        } catch (error) {
          logger.error({ err: error, kind: 'router', id: roomIdOf(room) }, 'media close handler failed');
        }
      });
    },

    watch(kind, entry) {
      const resource = resourceOf(kind, entry);
      if (kind !== 'router') resource.observer.once('close', () => {
        try {
          onClose(kind, entry);
        } catch (error) {
          logger.error({ err: error, kind, id: resource.id }, 'media close handler failed');
        }
      });
      (kinds[kind] as { watch?: (entry: EntryOf[typeof kind], publish: (input: RelayEventInput) => void) => void }).watch?.(entry, (input) => {
        try {
          publish(input);
        } catch (error) {
          logger.error({ err: error, kind, id: resource.id, eventType: input.type }, 'media event handler failed');
        }
      });
    },
  };
}

/** `dataProducer` → `data_producer`, as the close reasons spell kinds. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
