// The media relay's engine side, one per process: the worker pool, the registry and the ops bound to
// them. HTTP (./http) calls these and never touches a worker.
import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import { createEngineCall, ENGINE_TIMEOUT_MS } from './engine/call.js';
import { WorkerPool } from './engine/pool.js';
import { createEventBridge } from './events/bridge.js';
import { createRelayBus, type RelayBus } from './events/index.js';
import { KIND_PLURALS, KINDS, OPS, type MediaOps } from './kinds/index.js';
import { bindOps, opsBinder } from './ops/index.js';
import type { OpsDeps } from './ops/deps.js';
import { kindsOf, type RegistryCounts, type ResourceKind, type RouterEntry } from './registry/kinds.js';
import { roomLimits, RoomCaps } from './registry/caps.js';
import { RouterPlacement } from './registry/placement.js';
import { MediaRegistry } from './registry/registry.js';
import { closeRoom, RoomBook, type RemoteParts } from './rooms/rooms.js';

export { ENGINE_TIMEOUT_MS } from './engine/call.js';
export type { MediaOps } from './kinds/index.js';

type MediaConfig = Config['media'];

export interface WorkerInfo {
  /** pid of the live worker, or of the last one while its slot waits for a restart. */
  pid: number | null;
  alive: boolean;
  restarts: number;
  deaths: number;
  /** Routers on the worker: one per room that has some of its transports there. */
  routers: number;
  port: number;
  /** Delay of the restart scheduled last (null before the first death). */
  lastRestartDelayMs: number | null;
  /** What the live worker holds (all 0 while the slot waits for a restart): what a placement weighs. */
  counts: RegistryCounts;
}

export interface MediaInfo {
  startedAt: Date;
  /** True once a drain has begun: new routers are refused with DRAINING. */
  draining: boolean;
  workers: WorkerInfo[];
  counts: RegistryCounts;
  limits: {
    maxRouters: number;
    maxTransportsPerRouter: number;
    maxProducersPerRouter: number;
    maxConsumersPerRouter: number;
    rtcMinPort: number;
    rtcMaxPort: number;
  };
  /** The most transports, producers and consumers any one router holds now (each its own maximum). */
  largestRouter: Pick<RegistryCounts, 'transports' | 'producers' | 'consumers'>;
}

export interface WorkerStats {
  slot: number;
  pid: number;
  counts: RegistryCounts;
  cpuUserMs: number;
  cpuSystemMs: number;
  maxRssKiB: number;
}

export interface MediaServiceOptions {
  /** How long a worker must stay up before its backoff starts over (default 60 s). */
  stableAfterMs?: number;
  /** How long an engine call may take before it fails with MEDIASOUP_ERROR (default ENGINE_TIMEOUT_MS). */
  engineTimeoutMs?: number;
  /**
   * Where the engine's events go (createRelayEvents(...).bus); without one, a bus of the service's
   * own that nobody reads (the registry is kept exact through the event bridge either way).
   */
  bus?: RelayBus;
  /** Given the service's insides once it is made: a test seam, never set in production. */
  inspect?: (inspection: MediaInspection) => void;
}

/** The relay's operations (createRouter, createTransport, …) plus the service's own lifecycle and figures. */
export interface MediaService extends MediaOps {
  /**
   * The same ops, for the HTTP request `requestId`: the engine calls they make carry its id into
   * their failure logs and a worker's death log. Passed explicitly, not through AsyncLocalStorage,
   * whose promise hooks cost every promise of the process (a third of the relay's CPU per request).
   * @example await media.forRequest(c.get('requestId')).createTransport(input)
   */
  forRequest(requestId: string | undefined): MediaOps;
  /** The workers; `pool.events` tells of deaths and restarts, to any number of listeners. */
  readonly pool: WorkerPool;
  info(): MediaInfo;
  /** Routers open now: what placement reads on each call, without the rest of info()'s walk over every room. */
  routerCount(): number;
  /**
   * Per live worker: its resources and the OS resource usage mediasoup reports (ru_utime/ru_stime in
   * ms, ru_maxrss in KiB). A worker that dies while asked is left out.
   */
  workerStats(): Promise<WorkerStats[]>;
  aliveWorkerCount(): number;
  /**
   * A cluster node whose rooms may span nodes (cluster/span.ts): `make` is given the ops' deps; its
   * `remote` serves the ops (a producer copied from another node), `roomClosed` hears each room's close.
   */
  attachSpan<T extends { remote: RemoteParts; roomClosed(room: RouterEntry): void }>(make: (deps: OpsDeps) => T): T;
  /** The kind of the resource `id` names when this relay holds it (the cluster asks it of every node). */
  holds(id: string): ResourceKind | undefined;
  /** The ids of its routers, transports (WebRTC, plain, pipe) and producers, at most `max` of each (a cluster node lists them for node.lost). */
  heldIds(max: number): { routerIds: string[]; transportIds: string[]; producerIds: string[]; truncated: boolean };
  /**
   * Starts a drain (idempotent): createRouter answers DRAINING from now on, everything on the routers
   * already open keeps working, and `relay.draining` is published once. `started` is false when a
   * drain was already under way; `routers` is how many are still open.
   */
  drain(): { started: boolean; routers: number };
  readonly draining: boolean;
  /** Resolves true once no router is open, or false after `timeoutMs` (checked every 50 ms). */
  whenNoRouters(timeoutMs: number): Promise<boolean>;
  /** Closes every open router (events say `shutdown`), the workers staying up: the end of a drain. */
  closeRouters(): number;
  /**
   * The process has begun to stop (SIGTERM/SIGINT), a drain perhaps first: no worker restarts, and a
   * worker that exits cleanly meanwhile (a terminal's Ctrl-C reaches the workers too) has stopped, not
   * died (its rooms close with `shutdown`). Call it from the signal handler, before anything else.
   */
  beginShutdown(): void;
  /** Closes the workers (and with them every resource) and cancels pending restarts. */
  close(): Promise<void>;
}

/** What a test may look into beside the service's interface (MediaServiceOptions.inspect). */
export interface MediaInspection {
  /** A room's parts and piped copies, to compare with the workers' dumps. */
  room(routerId: string): RouterEntry | undefined;
}

/**
 * Starts `config.workers` workers, each with a WebRtcServer on RTC_MIN_PORT + i; rejects with a
 * message naming the port when one cannot bind.
 * @example const media = await createMedia(config.media, logger); const router = await media.createRouter({})
 */
export async function createMedia(config: MediaConfig, logger: Logger, options: MediaServiceOptions = {}): Promise<MediaService> {
  const startedAt = new Date();
  // The bridge watches what the registry and the rooms add; it is made after them, before anything is added.
  const registry = new MediaRegistry({ kinds: KINDS, onAdd: (kind, entry) => bridge.watch(kind, entry) });
  const rooms = new RoomBook({ registry, onPart: (room, part) => bridge.watchPart(room, part) });
  const pool = await WorkerPool.start(config, logger, options.stableAfterMs === undefined ? {} : { stableAfterMs: options.stableAfterMs });
  const bus = options.bus ?? createRelayBus({ bufferSize: 1 });
  const bridge = createEventBridge({ registry, rooms, pool, bus, logger });
  const { engine, engineFor, inFlightOn } = createEngineCall({
    timeoutMs: options.engineTimeoutMs ?? ENGINE_TIMEOUT_MS,
    logger,
    isOpen: (kind, id) => registry.has(kind, id),
    workerOf: (kind, id) => registry.get(kind, id)?.worker,
  });
  pool.events.on('workerDied', (worker, slot) => {
    // Before the calls' rejections run: they are still under way here, with the requests they serve.
    const inFlight = inFlightOn(worker);
    if (inFlight.length > 0) {
      logger.error({ slot: slot.index, workerPid: worker.pid, inFlight, requestIds: inFlight.map((call) => call.requestId) }, 'media worker died with engine calls in flight');
    }
    registry.dropWorker(worker);
  });
  pool.events.on('workerStopped', (worker) => registry.dropWorker(worker));
  const caps = new RoomCaps(registry, roomLimits(config, KINDS));
  const resourceKinds = kindsOf(KINDS);
  let draining = false;
  const deps = {
    config,
    logger,
    pool,
    registry,
    placement: new RouterPlacement(pool, (worker) => rooms.partsOn(worker)),
    caps,
    engine,
    rooms,
    draining: () => draining,
    span: undefined as RemoteParts | undefined,
  };
  const ops = bindOps(OPS, deps);
  options.inspect?.({ room: (routerId) => registry.get('router', routerId) });
  const bindForRequest = opsBinder(OPS);

  return {
    ...ops,
    pool,

    forRequest(requestId) {
      return bindForRequest({ ...deps, engine: engineFor(requestId) });
    },

    attachSpan(make) {
      const span = make(deps);
      deps.span = span.remote;
      rooms.onRoomClosed = (room) => span.roomClosed(room);
      return span;
    },

    holds(id) {
      for (const kind of resourceKinds) if (registry.has(kind, id)) return kind === 'router' && registry.get('router', id)!.origin ? undefined : kind;
      return undefined;
    },

    heldIds(max) {
      let truncated = false;
      const take = (...kinds: ResourceKind[]) => {
        const out: string[] = [];
        for (const kind of kinds) {
          for (const id of registry.ids(kind)) {
            if (out.length >= max) {
              truncated = true;
              return out;
            }
            out.push(id);
          }
        }
        return out;
      };
      return { routerIds: take('router'), transportIds: take('transport', 'plainTransport', 'pipeTransport'), producerIds: take('producer'), truncated };
    },

    get draining() {
      return draining;
    },

    drain() {
      const routers = registry.count('router');
      if (draining) return { started: false, routers };
      draining = true;
      logger.info({ routers }, 'draining: new routers are refused, open rooms go on');
      bus.publish({ type: 'relay.draining' });
      return { started: true, routers };
    },

    async whenNoRouters(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (registry.count('router') > 0) {
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
      }
      return true;
    },

    beginShutdown() {
      pool.beginShutdown();
    },

    closeRouters() {
      const open = registry.list('router');
      for (const room of open) closeRoom(registry, room, 'shutdown');
      return open.length;
    },

    routerCount: () => registry.count('router'),

    info: () => ({
      startedAt,
      draining,
      workers: pool.slots.map((slot) => ({
        pid: slot.pid ?? null,
        alive: slot.worker !== undefined,
        restarts: slot.restarts,
        deaths: slot.deaths,
        routers: slot.worker ? rooms.partsOn(slot.worker) : 0,
        port: slot.port,
        lastRestartDelayMs: slot.lastRestartDelayMs ?? null,
        counts: slot.worker ? registry.countsOn(slot.worker) : emptyCounts(),
      })),
      counts: registry.counts(),
      limits: {
        maxRouters: config.maxRouters,
        maxTransportsPerRouter: config.maxTransportsPerRouter,
        maxProducersPerRouter: config.maxProducersPerRouter,
        maxConsumersPerRouter: config.maxConsumersPerRouter,
        rtcMinPort: config.rtcMinPort,
        rtcMaxPort: config.rtcMaxPort,
      },
      largestRouter: caps.largest(),
    }),

    async workerStats() {
      const stats = await Promise.all(
        pool.slots.map(async (slot): Promise<WorkerStats | undefined> => {
          const { worker } = slot;
          if (!worker) return undefined;
          const usage = await worker.getResourceUsage().catch(() => undefined);
          if (!usage) return undefined;
          return {
            slot: slot.index,
            pid: worker.pid,
            counts: registry.countsOn(worker),
            cpuUserMs: usage.ru_utime,
            cpuSystemMs: usage.ru_stime,
            maxRssKiB: usage.ru_maxrss,
          };
        }),
      );
      return stats.filter((s): s is WorkerStats => s !== undefined);
    },

    aliveWorkerCount: () => pool.live().length,

    close() {
      for (const { router } of registry.list('router')) registry.markClosing(router, 'shutdown');
      pool.close();
      return Promise.resolve();
    },
  };
}

function emptyCounts(): RegistryCounts {
  return Object.fromEntries(KIND_PLURALS.map((plural) => [plural, 0])) as RegistryCounts;
}
