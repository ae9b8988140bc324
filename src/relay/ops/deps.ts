// What every op is given, and the few helpers several ops share. Ops are plain functions
// `(deps, ...input) -> result`: no Hono, no module state; index.ts binds them to one set of deps.
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import type { EngineCall } from '../engine/call.js';
import type { WorkerPool } from '../engine/pool.js';
import { conflict, type RelayError } from '../errors.js';
import type { types as ms } from 'mediasoup';
import { notFound } from '../errors.js';
import type { Direction, PlainTransportEntry, TransportEntry } from '../registry/kinds.js';
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

/** What producers and consumers are made on: a WebRTC transport (with its direction) or a plain RTP one. */
export type MediaTransport =
  | { readonly kind: 'transport'; readonly transport: ms.Transport; readonly entry: TransportEntry; readonly worker: ms.Worker; readonly routerId: string }
  | { readonly kind: 'plainTransport'; readonly transport: ms.Transport; readonly entry: PlainTransportEntry; readonly worker: ms.Worker; readonly routerId: string };

/**
 * The transport a producer or consumer body names as `transportId`: a WebRTC transport or a plain
 * one (the kinds table: a plain transport stands for a transport). NOT_FOUND names `transport`.
 */
export function requireMediaTransport(registry: MediaRegistry, id: string): MediaTransport {
  const webRtc = registry.get('transport', id);
  if (webRtc) return { kind: 'transport', transport: webRtc.transport, entry: webRtc, worker: webRtc.worker, routerId: webRtc.routerId };
  const plain = registry.get('plainTransport', id);
  if (plain) return { kind: 'plainTransport', transport: plain.plainTransport, entry: plain, worker: plain.worker, routerId: plain.routerId };
  throw notFound('transport', id);
}

/**
 * Ports the pipe and plain transports hold now: each takes one of the ports the WebRtcServers leave
 * in RTC_MIN_PORT-RTC_MAX_PORT, a plain transport without rtcpMux two.
 */
export function workerPortsInUse(registry: MediaRegistry): number {
  let used = registry.count('pipeTransport');
  for (const plain of registry.all('plainTransport')) used += plain.rtcpMux ? 1 : 2;
  return used;
}
