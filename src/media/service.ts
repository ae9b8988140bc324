// One media service per process: owns the mediasoup workers, their restarts and the registry.
// HTTP handlers call these methods and never touch a worker directly.
import type { types as ms } from 'mediasoup';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { DEFAULT_MEDIA_CODECS } from './codecs.js';
import { conflict, fromEngineError, notFound, RelayError, type ResourceKind } from './errors.js';
import {
  MediaRegistry,
  type ConsumerEntry,
  type Direction,
  type ProducerEntry,
  type RegistryCounts,
  type RouterEntry,
  type TransportEntry,
} from './registry.js';
import type { CreateConsumerBody, CreateProducerBody, CreateRouterBody, CreateTransportBody, DtlsParametersInput } from './schemas.js';
import { WorkerPool, type WorkerSlot } from './workers.js';

type MediaConfig = Config['media'];

const SCTP_STREAMS = { OS: 1024, MIS: 1024 };

export interface WorkerInfo {
  /** pid of the live worker, or of the last one while its slot waits for a restart. */
  pid: number | null;
  alive: boolean;
  restarts: number;
  deaths: number;
  routers: number;
  port: number;
  /** Delay of the restart scheduled last (null before the first death). */
  lastRestartDelayMs: number | null;
}

export interface MediaInfo {
  startedAt: Date;
  workers: WorkerInfo[];
  counts: RegistryCounts;
  limits: { maxRouters: number; rtcMinPort: number; rtcMaxPort: number };
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
}

/**
 * mediasoup 3.11 has no timeout of its own: a request the worker never answers (it drops one whose
 * JSON it cannot parse; a stopped worker answers nothing) would hold its HTTP request for ever.
 */
export const ENGINE_TIMEOUT_MS = 10_000;

class EngineTimeout extends Error {}

export class MediaService {
  private readonly registry = new MediaRegistry();
  private readonly startedAt = new Date();
  /** Routers being created, per slot: counted against the limit and the placement before they exist. */
  private readonly pendingRouters = new Map<number, number>();
  private pool!: WorkerPool;

  private constructor(
    private readonly config: MediaConfig,
    private readonly logger: Logger,
    private readonly engineTimeoutMs: number,
  ) {}

  /**
   * Starts `config.workers` workers, each with a WebRtcServer on RTC_MIN_PORT + i; rejects with a
   * message naming the port when one cannot bind.
   * @example const media = await MediaService.create(config.media, logger)
   */
  static async create(config: MediaConfig, logger: Logger, options: MediaServiceOptions = {}): Promise<MediaService> {
    const service = new MediaService(config, logger, options.engineTimeoutMs ?? ENGINE_TIMEOUT_MS);
    service.pool = await WorkerPool.start(config, logger, {
      onWorkerDied: (worker) => service.registry.dropWorker(worker),
      ...(options.stableAfterMs === undefined ? {} : { stableAfterMs: options.stableAfterMs }),
    });
    return service;
  }

  aliveWorkerCount(): number {
    return this.pool.live().length;
  }

  /** Closes the workers (and with them every resource) and cancels pending restarts. */
  async close(): Promise<void> {
    this.pool.close();
  }

  info(): MediaInfo {
    return {
      startedAt: this.startedAt,
      workers: this.pool.slots.map((slot) => ({
        pid: slot.pid ?? null,
        alive: slot.worker !== undefined,
        restarts: slot.restarts,
        deaths: slot.deaths,
        routers: slot.worker ? this.registry.routersOn(slot.worker) : 0,
        port: slot.port,
        lastRestartDelayMs: slot.lastRestartDelayMs ?? null,
      })),
      counts: this.registry.counts(),
      limits: { maxRouters: this.config.maxRouters, rtcMinPort: this.config.rtcMinPort, rtcMaxPort: this.config.rtcMaxPort },
    };
  }

  /**
   * Per live worker: its resources and the OS resource usage mediasoup reports (ru_utime/ru_stime in
   * ms, ru_maxrss in KiB). A worker that dies while asked is left out.
   */
  async workerStats(): Promise<WorkerStats[]> {
    const stats = await Promise.all(
      this.pool.slots.map(async (slot): Promise<WorkerStats | undefined> => {
        const { worker } = slot;
        if (!worker) return undefined;
        const usage = await worker.getResourceUsage().catch(() => undefined);
        if (!usage) return undefined;
        return {
          slot: slot.index,
          pid: worker.pid,
          counts: this.registry.countsOn(worker),
          cpuUserMs: usage.ru_utime,
          cpuSystemMs: usage.ru_stime,
          maxRssKiB: usage.ru_maxrss,
        };
      }),
    );
    return stats.filter((s): s is WorkerStats => s !== undefined);
  }

  async createRouter(input: CreateRouterBody): Promise<ms.Router> {
    const pending = [...this.pendingRouters.values()].reduce((a, b) => a + b, 0);
    if (this.registry.routers.size + pending >= this.config.maxRouters) {
      this.logger.warn({ maxRouters: this.config.maxRouters, open: this.registry.routers.size, pending }, 'router limit reached; router refused');
      throw new RelayError('ROUTER_LIMIT_EXCEEDED', `router limit reached: ${this.config.maxRouters}`, { maxRouters: this.config.maxRouters });
    }
    const slot = this.placeRouter();
    const worker = slot.worker!;
    this.pendingRouters.set(slot.index, (this.pendingRouters.get(slot.index) ?? 0) + 1);
    let router: ms.Router;
    try {
      router = await this.engine('create router', () =>
        worker.createRouter({
          // The engine normalises codecs in place: the shared defaults get a copy.
          mediaCodecs: (input.mediaCodecs ?? structuredClone(DEFAULT_MEDIA_CODECS)) as ms.RtpCodecCapability[],
          ...(input.appData ? { appData: input.appData } : {}),
        }),
      );
    } finally {
      this.pendingRouters.set(slot.index, (this.pendingRouters.get(slot.index) ?? 1) - 1);
    }
    return this.adopt(router, () => {
      if (router.closed || slot.worker !== worker) throw new RelayError('MEDIASOUP_ERROR', 'media worker died while creating the router');
      return this.registry.addRouter({ router, worker, slot: slot.index }).router;
    });
  }

  closeRouter(id: string): void {
    const { router } = this.router(id);
    // mediasoup 3.11's WebRtcServer forgets a transport only on transport.close(), not when its
    // router closes it: close the router's transports first, or the server's map grows for ever.
    for (const entry of [...this.registry.transports.values()]) {
      if (entry.routerId === id) entry.transport.close();
    }
    router.close();
  }

  async createTransport(input: CreateTransportBody): Promise<TransportEntry> {
    const { routerId, direction } = input;
    const { router, worker, slot } = this.router(routerId);
    const webRtcServer = this.pool.slots[slot]?.webRtcServer;
    if (!webRtcServer || this.pool.slots[slot]?.worker !== worker) throw new RelayError('MEDIASOUP_ERROR', 'media worker of the router is not alive');
    const transport = await this.engine('create transport', () =>
      router.createWebRtcTransport({
        webRtcServer,
        enableUdp: true,
        enableTcp: true,
        preferUdp: true,
        ...(input.enableSctp ? { enableSctp: true, numSctpStreams: SCTP_STREAMS } : {}),
        ...(input.appData ? { appData: input.appData } : {}),
      }),
      [['router', routerId]],
    );
    return this.adopt(transport, () => {
      if (transport.closed || !this.registry.routers.has(routerId)) throw notFound('router', routerId);
      return this.registry.addTransport({ transport, worker, routerId, direction, connected: false });
    });
  }

  /** The marker goes up before the engine call, so a concurrent second connect is refused too. */
  async connectTransport(id: string, dtlsParameters: DtlsParametersInput): Promise<TransportEntry> {
    const entry = this.transport(id);
    if (entry.connected) throw this.directionConflict(`transport already connected or connecting: ${id}`, entry);
    entry.connected = true;
    try {
      await this.engine('connect transport', () => entry.transport.connect({ dtlsParameters }), [['transport', id]]);
    } catch (error) {
      entry.connected = false;
      throw error;
    }
    if (!this.registry.transports.has(id)) throw notFound('transport', id);
    return entry;
  }

  /**
   * Closes a transport (a peer leaving a room that lives on): its producers, their consumers on
   * every transport, and its own consumers close with it. Closed through the transport itself, so
   * the worker's WebRtcServer forgets it too.
   */
  closeTransport(id: string): void {
    this.transport(id).transport.close();
  }

  async createProducer(input: CreateProducerBody): Promise<ms.Producer> {
    const { transportId } = input;
    const entry = this.transport(transportId);
    if (entry.direction !== 'send') throw this.directionConflict(`cannot produce on a recv transport: ${transportId}`, entry);
    const producer = await this.engine('create producer', () =>
      entry.transport.produce({
        kind: input.kind,
        rtpParameters: input.rtpParameters as unknown as ms.RtpParameters,
        paused: input.paused ?? false,
        ...(input.appData ? { appData: input.appData } : {}),
      }),
      [['transport', transportId]],
    ).catch((error: unknown) => {
      // An ssrc/MID clash with another producer: name the transport as every CONFLICT does.
      if (error instanceof RelayError && error.code === 'CONFLICT') throw conflict(error.message, { transportId, direction: entry.direction, ...error.details });
      throw error;
    });
    return this.adopt(producer, () => {
      if (producer.closed || !this.registry.transports.has(transportId)) throw notFound('transport', transportId);
      return this.registry.addProducer({ producer, worker: entry.worker, routerId: entry.routerId, transportId }).producer;
    });
  }

  closeProducer(id: string): void {
    this.producer(id).producer.close();
  }

  /** Consumers always start paused; `producerPaused` is what the engine reports. */
  async createConsumer(input: CreateConsumerBody): Promise<ConsumerEntry> {
    const { transportId, producerId } = input;
    const entry = this.transport(transportId);
    if (entry.direction !== 'recv') throw this.directionConflict(`cannot consume on a send transport: ${transportId}`, entry);
    const producer = this.producer(producerId);
    const rtpCapabilities = input.rtpCapabilities as unknown as ms.RtpCapabilities;
    const { router } = this.router(entry.routerId);
    if (producer.routerId !== entry.routerId || !router.canConsume({ producerId, rtpCapabilities })) {
      throw new RelayError('CAN_NOT_CONSUME', `cannot consume producer ${producerId} with the given capabilities`, {
        producerId,
        transportId,
        ...(producer.routerId !== entry.routerId ? { reason: 'producer belongs to another router' } : {}),
      });
    }
    const consumer = await this.engine('create consumer', () => entry.transport.consume({ producerId, rtpCapabilities, paused: true }), [
      ['transport', transportId],
      ['producer', producerId],
    ]);
    return this.adopt(consumer, () => {
      if (!this.registry.transports.has(transportId)) throw notFound('transport', transportId);
      if (consumer.closed || !this.registry.producers.has(producerId)) throw notFound('producer', producerId);
      return this.registry.addConsumer({ consumer, worker: entry.worker, routerId: entry.routerId, transportId, producerId });
    });
  }

  async resumeConsumer(id: string): Promise<ms.Consumer> {
    const { consumer } = this.consumer(id);
    await this.engine('resume consumer', () => consumer.resume(), [['consumer', id]]);
    if (!this.registry.consumers.has(id)) throw notFound('consumer', id);
    return consumer;
  }

  closeConsumer(id: string): void {
    this.consumer(id).consumer.close();
  }

  private router(id: string): RouterEntry {
    const entry = this.registry.routers.get(id);
    if (!entry) throw notFound('router', id);
    return entry;
  }

  private transport(id: string): TransportEntry {
    const entry = this.registry.transports.get(id);
    if (!entry) throw notFound('transport', id);
    return entry;
  }

  private producer(id: string): ProducerEntry {
    const entry = this.registry.producers.get(id);
    if (!entry) throw notFound('producer', id);
    return entry;
  }

  private consumer(id: string): ConsumerEntry {
    const entry = this.registry.consumers.get(id);
    if (!entry) throw notFound('consumer', id);
    return entry;
  }

  /** The live worker with the fewest routers (those being created included). */
  private placeRouter(): WorkerSlot {
    let best: { slot: WorkerSlot; load: number } | undefined;
    for (const slot of this.pool.live()) {
      const load = this.registry.routersOn(slot.worker!) + (this.pendingRouters.get(slot.index) ?? 0);
      if (!best || load < best.load) best = { slot, load };
    }
    if (!best) throw new RelayError('MEDIASOUP_ERROR', 'no live media worker');
    return best.slot;
  }

  private directionConflict(message: string, entry: TransportEntry): RelayError {
    return conflict(message, { transportId: entry.transport.id, direction: entry.direction satisfies Direction });
  }

  /**
   * Runs one engine call and maps its failure; the engine's own message goes to the log only. When a
   * resource the call needed went away meanwhile (closed, or its worker died), that NOT_FOUND is the answer.
   */
  private async engine<T>(operation: string, call: () => Promise<T>, needs: [ResourceKind, string][] = []): Promise<T> {
    const pending = (async () => call())();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EngineTimeout()), this.engineTimeoutMs);
    });
    try {
      return await Promise.race([pending, deadline]);
    } catch (error) {
      const gone = needs.find(([kind, id]) => !this.registered(kind, id));
      if (error instanceof EngineTimeout) {
        // Whatever the engine makes of this call later is not wanted any more.
        pending.then(closeLate, () => {});
        this.logger.error({ operation, timeoutMs: this.engineTimeoutMs }, 'media engine did not answer in time');
        if (gone) throw notFound(...gone);
        throw new RelayError('MEDIASOUP_ERROR', `media engine did not answer in time: ${operation}`);
      }
      if (gone) throw notFound(...gone);
      const mapped = fromEngineError(error, operation);
      if (mapped.code === 'MEDIASOUP_ERROR') this.logger.error({ err: error, operation }, 'media engine call failed');
      throw mapped;
    } finally {
      clearTimeout(timer);
    }
  }

  private registered(kind: ResourceKind, id: string): boolean {
    switch (kind) {
      case 'router':
        return this.registry.routers.has(id);
      case 'transport':
        return this.registry.transports.has(id);
      case 'producer':
        return this.registry.producers.has(id);
      case 'consumer':
        return this.registry.consumers.has(id);
      default:
        return true;
    }
  }

  /** A resource the engine created but the registry could not take is closed, never left half-created. */
  private adopt<R extends { close(): void }, T>(resource: R, register: () => T): T {
    try {
      return register();
    } catch (error) {
      resource.close();
      throw error;
    }
  }
}

/** Closes a resource the engine created after its request had already failed for lateness. */
function closeLate(late: unknown): void {
  const resource = late as { close?: () => void; closed?: boolean } | undefined;
  if (resource && typeof resource.close === 'function' && resource.closed !== true) resource.close();
}
