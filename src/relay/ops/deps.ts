// What every op is given, and the few helpers several ops share. Ops are plain functions
// `(deps, ...input) -> result`: no Hono, no module state; index.ts binds them to one set of deps.
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import type { EngineCall } from '../engine/call.js';
import type { WorkerPool } from '../engine/pool.js';
import { conflict, type RelayError } from '../errors.js';
import type { types as ms } from 'mediasoup';
import { notFound } from '../errors.js';
import type { Direction, EntryOf, MediaCarrierKind, TransportEntry } from '../registry/kinds.js';
import type { RoomCaps } from '../registry/caps.js';
import type { RouterPlacement } from '../registry/placement.js';
import type { MediaRegistry } from '../registry/registry.js';
import type { RoomBook, RoomDeps } from '../rooms/rooms.js';

export interface OpsDeps extends RoomDeps {
  readonly config: Config['media'];
  readonly logger: Logger;
  readonly pool: WorkerPool;
  readonly registry: MediaRegistry;
  readonly placement: RouterPlacement;
  /** The rooms' parts on each worker and the copies piped between them. */
  readonly rooms: RoomBook;
  /** Per-router caps of transports, producers and consumers (creations under way included). */
  readonly caps: RoomCaps;
  /** The only way an op calls the engine (deadline, error mapping, NOT_FOUND when a need went away). */
  readonly engine: EngineCall;
  /** Whether a drain has begun: new routers are refused with DRAINING, everything else goes on. */
  readonly draining: () => boolean;
}

/** The CONFLICT of a transport used against its direction or state, naming it as every such answer does. */
export function directionConflict(message: string, entry: TransportEntry): RelayError {
  return conflict(message, { transportId: entry.transport.id, direction: entry.direction satisfies Direction });
}

/** What producers and consumers are made on: a WebRTC transport (with its direction) or another kind that carries media. */
export type MediaTransport = {
  [K in MediaCarrierKind]: { readonly kind: K; readonly transport: ms.Transport; readonly entry: EntryOf[K]; readonly worker: ms.Worker; readonly routerId: string };
}[MediaCarrierKind];

/**
 * The transport a producer or consumer body names as `transportId`: a WebRTC transport or another
 * kind that carries media (its row in the kinds table stands for a transport), the WebRTC transport
 * first (the table's order). NOT_FOUND names `transport`.
 */
export function requireMediaTransport(registry: MediaRegistry, id: string): MediaTransport {
  const { kinds } = registry;
  for (const kind of registry.order) {
    if (!('carriesMedia' in kinds[kind])) continue;
    const entry = registry.get(kind as MediaCarrierKind, id);
    if (entry) return { kind, transport: registry.resourceOf(kind, entry) as ms.Transport, entry, worker: entry.worker, routerId: entry.routerId } as MediaTransport;
  }
  throw notFound('transport', id);
}

/**
 * The ports of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers (one per worker): how many there are,
 * and how many are held now (each entry of a kind whose row counts them, as many as it says, and the
 * pipes to and from other cluster nodes, never registry entries). What a new plain or pipe transport
 * checks before it asks the engine for a port.
 */
export function workerPorts({ config, registry, span }: Pick<OpsDeps, 'config' | 'registry' | 'span'>): { ports: number; used: number } {
  let used = span?.portsInUse() ?? 0;
  for (const kind of registry.order) {
    const row = registry.kinds[kind] as { ports?(entry: EntryOf[typeof kind]): number };
    if (row.ports === undefined) continue;
    for (const entry of registry.all(kind)) used += row.ports(entry);
  }
  return { ports: config.rtcMaxPort - config.rtcMinPort + 1 - config.workers, used };
}
