// id → resource for the four kinds the relay hands out, kept exact through mediasoup's own
// `observer` 'close' events, which fire however a resource ends (API close, parent closed, worker died).
import type { types as ms } from 'mediasoup';

export type Direction = 'send' | 'recv';

export interface RouterEntry {
  readonly router: ms.Router;
  readonly worker: ms.Worker;
  readonly slot: number;
}

export interface TransportEntry {
  readonly transport: ms.WebRtcTransport;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly direction: Direction;
  /** Set before the engine's connect() runs, reverted if it fails: a second connect is refused. */
  connected: boolean;
}

export interface ProducerEntry {
  readonly producer: ms.Producer;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly transportId: string;
}

export interface ConsumerEntry {
  readonly consumer: ms.Consumer;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly transportId: string;
  readonly producerId: string;
}

export interface RegistryCounts {
  routers: number;
  transports: number;
  producers: number;
  consumers: number;
}

export class MediaRegistry {
  readonly routers = new Map<string, RouterEntry>();
  readonly transports = new Map<string, TransportEntry>();
  readonly producers = new Map<string, ProducerEntry>();
  readonly consumers = new Map<string, ConsumerEntry>();

  addRouter(entry: RouterEntry): RouterEntry {
    const { id } = entry.router;
    this.routers.set(id, entry);
    entry.router.observer.once('close', () => this.routers.delete(id));
    return entry;
  }

  addTransport(entry: TransportEntry): TransportEntry {
    const { id } = entry.transport;
    this.transports.set(id, entry);
    entry.transport.observer.once('close', () => this.transports.delete(id));
    return entry;
  }

  addProducer(entry: ProducerEntry): ProducerEntry {
    const { id } = entry.producer;
    this.producers.set(id, entry);
    // The worker reports the consumers of a closed producer later (and not at all once the channel
    // is gone); closing them here keeps the registry exact the moment the producer goes.
    entry.producer.observer.once('close', () => {
      this.producers.delete(id);
      this.closeConsumersOf(id);
    });
    return entry;
  }

  addConsumer(entry: ConsumerEntry): ConsumerEntry {
    const { id } = entry.consumer;
    this.consumers.set(id, entry);
    entry.consumer.observer.once('close', () => this.consumers.delete(id));
    return entry;
  }

  /** Removes everything a worker held; a safety net behind the close events when it dies. */
  dropWorker(worker: ms.Worker): void {
    const sweep = (map: Map<string, { worker: ms.Worker }>) => {
      for (const [id, entry] of map) if (entry.worker === worker) map.delete(id);
    };
    sweep(this.consumers);
    sweep(this.producers);
    sweep(this.transports);
    sweep(this.routers);
  }

  /** What one worker holds, for the per-worker metrics. */
  countsOn(worker: ms.Worker): RegistryCounts {
    const on = (map: Map<string, { worker: ms.Worker }>) => {
      let count = 0;
      for (const entry of map.values()) if (entry.worker === worker) count += 1;
      return count;
    };
    return { routers: on(this.routers), transports: on(this.transports), producers: on(this.producers), consumers: on(this.consumers) };
  }

  routersOn(worker: ms.Worker): number {
    let count = 0;
    for (const entry of this.routers.values()) if (entry.worker === worker) count += 1;
    return count;
  }

  counts(): RegistryCounts {
    return {
      routers: this.routers.size,
      transports: this.transports.size,
      producers: this.producers.size,
      consumers: this.consumers.size,
    };
  }

  private closeConsumersOf(producerId: string): void {
    for (const entry of [...this.consumers.values()]) {
      if (entry.producerId !== producerId) continue;
      this.consumers.delete(entry.consumer.id);
      entry.consumer.close();
    }
  }
}
