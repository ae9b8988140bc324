// The pool of mediasoup workers: one slot per worker, each with its WebRtcServer on its own port,
// re-created after a death with a delay that doubles per consecutive failure. What happens to the
// workers is told through `events`, to any number of listeners.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import * as mediasoup from 'mediasoup';
import type { types as ms } from 'mediasoup';
import { isUnspecifiedIp, type Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import { TypedEmitter } from './emitter.js';

type MediaConfig = Config['media'];

/** A worker that stayed up this long starts its next backoff from the base delay again. */
export const STABLE_AFTER_MS = 60_000;

export interface WorkerSlot {
  readonly index: number;
  /** RTC_MIN_PORT + index, UDP and TCP; a restarted worker binds the same port. */
  readonly port: number;
  worker: ms.Worker | undefined;
  webRtcServer: ms.WebRtcServer | undefined;
  /** pid of the current worker, or of the last one while the slot waits for a restart. */
  pid: number | undefined;
  startedAt: number;
  restarts: number;
  deaths: number;
  /** Consecutive deaths and failed restarts since the worker last stayed up STABLE_AFTER_MS. */
  failures: number;
  /** Delay of the restart scheduled last, for /internal/info and the logs. */
  lastRestartDelayMs: number | undefined;
  restartTimer: NodeJS.Timeout | undefined;
}

export interface ListenAddresses {
  tcpIp: string;
  udpIp: string;
  announcedIp: string | undefined;
}

export interface WorkerPoolOptions {
  stableAfterMs?: number;
}

export type PoolEvents = {
  /**
   * A live worker died; mediasoup has closed its routers by now. The slot already counts the death
   * and its restart is scheduled (slot.lastRestartDelayMs), unless the service is shutting down
   * (no restart then, and no delay).
   */
  workerDied: [worker: ms.Worker, slot: WorkerSlot];
  /**
   * A worker ended cleanly after the process had begun to stop (`beginShutdown`): the terminal's
   * Ctrl-C reached it too. mediasoup has closed its routers by now; nothing restarts.
   */
  workerStopped: [worker: ms.Worker, slot: WorkerSlot];
  /** A slot's worker was re-created after a death. */
  workerRestarted: [worker: ms.Worker, slot: WorkerSlot];
};

export class WorkerPool {
  readonly slots: WorkerSlot[];
  readonly events: TypedEmitter<PoolEvents>;
  private closing = false;
  private shuttingDown = false;

  private constructor(
    private readonly config: MediaConfig,
    private readonly addresses: ListenAddresses,
    private readonly logger: Logger,
    private readonly options: WorkerPoolOptions,
  ) {
    this.events = new TypedEmitter<PoolEvents>((error, event, [, slot]) => {
      this.logger.error({ err: error, slot: slot.index, event }, event === 'workerDied' ? 'media worker death handler failed' : 'media worker event listener failed');
    });
    this.slots = Array.from({ length: config.workers }, (_, index) => ({
      index,
      port: config.rtcMinPort + index,
      worker: undefined,
      webRtcServer: undefined,
      pid: undefined,
      startedAt: 0,
      restarts: 0,
      deaths: 0,
      failures: 0,
      lastRestartDelayMs: undefined,
      restartTimer: undefined,
    }));
  }

  /**
   * Starts every worker; if one cannot start (e.g. its port is taken) all are closed and this throws.
   * Listeners added to `events` afterwards hear of every later death and restart.
   */
  static async start(config: MediaConfig, logger: Logger, options: WorkerPoolOptions = {}): Promise<WorkerPool> {
    const ports = config.rtcMaxPort - config.rtcMinPort + 1;
    if (ports < config.workers) {
      throw new Error(`${config.workers} media workers need ${config.workers} ports but RTC_MIN_PORT-RTC_MAX_PORT holds ${ports}`);
    }
    const addresses = await resolveListenAddresses(config);
    const pool = new WorkerPool(config, addresses, logger, options);
    try {
      for (const slot of pool.slots) await pool.startSlot(slot);
    } catch (error) {
      pool.close();
      throw error;
    }
    logger.info({ workers: config.workers, ports: `${config.rtcMinPort}-${config.rtcMinPort + config.workers - 1}`, ...addresses }, 'media workers ready');
    if (addresses.announcedIp === undefined && (isUnspecifiedIp(addresses.tcpIp) || isUnspecifiedIp(addresses.udpIp))) {
      // Refused outright in production (config.ts); in development the relay runs, but says why media will not flow.
      logger.warn(
        { tcpIp: addresses.tcpIp, udpIp: addresses.udpIp },
        'MEDIASOUP_ANNOUNCED_IP is not set: ICE candidates carry the wildcard listen address, which clients cannot reach; set it to the address clients use (127.0.0.1 for clients on this machine)',
      );
    }
    return pool;
  }

  live(): WorkerSlot[] {
    return this.slots.filter((slot) => slot.worker !== undefined);
  }

  /** True once the process has begun to stop (`beginShutdown`) or the pool is closed. */
  get stopping(): boolean {
    return this.shuttingDown || this.closing;
  }

  /**
   * The process has begun to stop (SIGTERM/SIGINT; a drain may still run): no worker restarts from now
   * on, and a worker that exits cleanly has stopped, not died. That is what a terminal's Ctrl-C does:
   * its SIGINT goes to the whole process group, and a mediasoup worker closes itself on SIGINT or
   * SIGTERM and exits with code 0. The process sees its own SIGINT before a worker's exit (the kernel
   * delivers both at once, and libuv hands signals, SIGCHLD included, to the loop in arrival order), so
   * calling this from the signal handler is in time. A crash (a signal, a non-zero code) is still a death.
   */
  beginShutdown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
    }
  }

  /** Closes every worker and cancels pending restarts; a worker that ends from now on has stopped, not died. */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    let stopped = 0;
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
      const { worker } = slot;
      slot.worker = undefined;
      slot.webRtcServer = undefined;
      if (worker && !worker.closed) stopped++;
      worker?.close();
    }
    this.logger.info({ workers: stopped }, 'media workers stopped');
  }

  private async startSlot(slot: WorkerSlot): Promise<void> {
    const { config, addresses } = this;
    const worker = await mediasoup.createWorker({
      logLevel: config.logLevel,
      // The WebRtcServers hold RTC_MIN_PORT + index; what the worker picks itself (pipe transports'
      // ports) comes from the rest of the range. With no port left (config.ts allows that only
      // without pipes) the worker keeps the whole range, from which nothing then picks a port.
      ...workerPortRange(config),
      appData: { slot: slot.index },
    });
    worker.on('died', (error) => this.handleDeath(slot, worker, error));
    try {
      const announced = addresses.announcedIp === undefined ? {} : { announcedIp: addresses.announcedIp };
      const webRtcServer = await worker.createWebRtcServer({
        listenInfos: [
          { protocol: 'udp', ip: addresses.udpIp, port: slot.port, ...announced },
          { protocol: 'tcp', ip: addresses.tcpIp, port: slot.port, ...announced },
        ],
        appData: { slot: slot.index },
      });
      if (this.closing) throw new Error('media service is closing');
      if (worker.closed) throw new Error('worker exited during start-up');
      slot.worker = worker;
      slot.webRtcServer = webRtcServer;
      slot.pid = worker.pid;
      slot.startedAt = Date.now();
    } catch (error) {
      worker.close();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `media worker ${slot.index} could not open its WebRtcServer on port ${slot.port} (udp ${addresses.udpIp}, tcp ${addresses.tcpIp}; RTC_MIN_PORT + ${slot.index}, see RTC_MIN_PORT/RTC_MAX_PORT): ${reason}`,
        { cause: error },
      );
    }
  }

  private handleDeath(slot: WorkerSlot, worker: ms.Worker, error: Error): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    slot.webRtcServer = undefined;
    const upMs = Date.now() - slot.startedAt;
    const fields = { slot: slot.index, workerPid: worker.pid, port: slot.port, upMs };
    if (this.stopping && exitedCleanly(error)) {
      this.logger.info(fields, 'media worker stopped (the service is shutting down)');
      this.events.emit('workerStopped', worker, slot);
      return;
    }
    slot.deaths += 1;
    if (upMs >= (this.options.stableAfterMs ?? STABLE_AFTER_MS)) slot.failures = 0;
    this.logger.error({ ...fields, err: error }, 'media worker died');
    if (this.stopping) {
      slot.lastRestartDelayMs = undefined;
      this.logger.info({ slot: slot.index }, 'media worker not restarted: the service is shutting down');
    } else {
      // Scheduled first, so the listeners already know the delay (slot.lastRestartDelayMs).
      this.scheduleRestart(slot);
    }
    this.events.emit('workerDied', worker, slot);
  }

  private scheduleRestart(slot: WorkerSlot): void {
    if (this.stopping) return;
    slot.failures += 1;
    const exponent = Math.min(slot.failures - 1, 30);
    const delayMs = Math.min(this.config.restartMaxMs, this.config.restartBaseMs * 2 ** exponent);
    slot.lastRestartDelayMs = delayMs;
    this.logger.warn({ slot: slot.index, attempt: slot.failures, delayMs }, 'media worker restart scheduled');
    slot.restartTimer = setTimeout(() => void this.restart(slot), delayMs);
    slot.restartTimer.unref();
  }

  /** Never rejects: a failed restart schedules the next attempt. */
  private async restart(slot: WorkerSlot): Promise<void> {
    slot.restartTimer = undefined;
    if (this.stopping) return;
    try {
      await this.startSlot(slot);
      slot.restarts += 1;
      this.logger.info({ slot: slot.index, workerPid: slot.pid, port: slot.port, restarts: slot.restarts }, 'media worker restarted');
      if (slot.worker) this.events.emit('workerRestarted', slot.worker, slot);
    } catch (error) {
      if (this.stopping) return;
      this.logger.error({ slot: slot.index, err: error }, 'media worker restart failed');
      this.scheduleRestart(slot);
    }
  }
}

/**
 * Whether mediasoup's death error (`[pid:1, code:0, signal:null]`) tells of a worker that was asked
 * to stop: it closed itself and exited 0, as it does on SIGINT or SIGTERM, or one of those signals
 * ended it before it had its handlers. A crash ends by another signal or with another code.
 */
export function exitedCleanly(error: Error): boolean {
  return /\bcode:(?:0, signal:null|null, signal:SIG(?:INT|TERM))\]/.test(error.message);
}

/** The part of RTC_MIN_PORT-RTC_MAX_PORT that no WebRtcServer takes: where pipe transports listen. */
export function workerPortRange(config: Pick<MediaConfig, 'rtcMinPort' | 'rtcMaxPort' | 'workers'>): { rtcMinPort: number; rtcMaxPort: number } {
  const firstFree = config.rtcMinPort + config.workers;
  return firstFree <= config.rtcMaxPort ? { rtcMinPort: firstFree, rtcMaxPort: config.rtcMaxPort } : { rtcMinPort: config.rtcMinPort, rtcMaxPort: config.rtcMaxPort };
}

/** mediasoup binds literal IPs only: a host name in MEDIASOUP_UDP_LISTEN_IP is resolved to IPv4 once, here. */
export async function resolveListenAddresses(config: MediaConfig): Promise<ListenAddresses> {
  let udpIp = config.listenIp;
  if (config.udpListenIp !== undefined) {
    udpIp = config.udpListenIp;
    if (isIP(udpIp) === 0) {
      try {
        udpIp = (await lookup(config.udpListenIp, { family: 4 })).address;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`MEDIASOUP_UDP_LISTEN_IP: cannot resolve "${config.udpListenIp}" to an IPv4 address: ${reason}`, { cause: error });
      }
    }
  }
  return { tcpIp: config.listenIp, udpIp, announcedIp: config.announcedIp };
}
