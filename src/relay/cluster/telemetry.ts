// The cluster's live-only events (telemetry: scores, layers, speakers) on every node's stream. Durable
// events reach every node through the shared event log; telemetry is never stored, so each node
// publishes its own on a Redis channel, in batches of at most BATCH_MS, and carries the other nodes'
// into its bus (EventBus.carry: streamed with a local live-only id, never posted again: the node it
// happened on posts it to the webhook, once for the cluster).
//
// Telemetry is superseded by the next event of its kind, so while Redis does not answer a batch is
// dropped (counted), never queued; the subscriber's connection subscribes again when Redis comes back.
// What comes from Redis is checked against the event catalog before it reaches a stream.
import { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import { eventSchemas, LIVE_ONLY_TYPES, type RelayEvent } from '../contract/events.js';
import type { RelayBus } from '../events/index.js';

/** How long an event waits for its batch to go. */
export const BATCH_MS = 50;
/** Events one batch carries at most; more in one interval are dropped (counted). */
export const MAX_BATCH = 2_000;
/** A message read from the channel longer than this is ignored. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
const COMMAND_TIMEOUT_MS = 1_000;

const liveOnly: ReadonlySet<string> = new Set(LIVE_ONLY_TYPES);

export interface TelemetryStats {
  /** This node's events published on the channel. */
  sent: number;
  /** Other nodes' events carried into this node's streams. */
  received: number;
  /** This node's events not published: Redis did not answer, or a batch was full. */
  dropped: number;
  /** Entries read from the channel that are not a live-only event of another node (ignored). */
  rejected: number;
}

export interface TelemetryOptions {
  redisUrl: string;
  /** The cluster's key prefix: the channel is `<prefix>telemetry`. */
  prefix: string;
  nodeId: string;
  bus: RelayBus;
  logger: Logger;
  batchMs?: number;
}

/**
 * @example
 * const telemetry = createTelemetry({ redisUrl, prefix: 'cluster:', nodeId, bus, logger })
 * telemetry.start(); …; telemetry.stop()
 */
export function createTelemetry(options: TelemetryOptions) {
  const { nodeId, bus, logger } = options;
  const channel = `${options.prefix}telemetry`;
  const batchMs = options.batchMs ?? BATCH_MS;
  const retryStrategy = () => 1_000;
  // Publishing fails at once while the connection is down (enableOfflineQueue: false): the batch is dropped.
  const publisher = new Redis(options.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: COMMAND_TIMEOUT_MS, connectTimeout: COMMAND_TIMEOUT_MS, retryStrategy });
  // The subscription waits for a connection (queued) and is made again on each reconnect (ioredis' autoResubscribe).
  const subscriber = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: null, connectTimeout: COMMAND_TIMEOUT_MS, retryStrategy });
  // Connection errors are reported as events; what was dropped is counted.
  publisher.on('error', () => {});
  subscriber.on('error', () => {});
  const stats: TelemetryStats = { sent: 0, received: 0, dropped: 0, rejected: 0 };
  let batch: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;
  let stopped = false;

  function flush(): void {
    timer = undefined;
    const events = batch;
    batch = [];
    if (events.length === 0) return;
    if (publisher.status !== 'ready') {
      stats.dropped += events.length;
      if (publisher.status === 'wait') publisher.connect().catch(() => {});
      return;
    }
    publisher.publish(channel, `[${events.join(',')}]`).then(
      () => (stats.sent += events.length),
      () => (stats.dropped += events.length),
    );
  }

  function take(event: RelayEvent): void {
    if (!liveOnly.has(event.type) || event.nodeId !== nodeId) return;
    if (batch.length >= MAX_BATCH) {
      stats.dropped++;
      return;
    }
    const { id: _id, ...rest } = event;
    batch.push(JSON.stringify(rest));
    timer ??= setTimeout(flush, batchMs);
  }

  /** Each entry of a message: another node's live-only event, as the catalog describes it. */
  function read(message: string): void {
    if (message.length > MAX_MESSAGE_BYTES) {
      stats.rejected++;
      return;
    }
    let entries: unknown;
    try {
      entries = JSON.parse(message);
    } catch {
      stats.rejected++;
      return;
    }
    if (!Array.isArray(entries)) {
      stats.rejected++;
      return;
    }
    for (const entry of entries.slice(0, MAX_BATCH)) {
      const type = (entry as { type?: unknown } | null)?.type;
      const schema = typeof type === 'string' && liveOnly.has(type) ? eventSchemas[type as (typeof LIVE_ONLY_TYPES)[number]] : undefined;
      const parsed = schema?.safeParse({ ...(entry as object), id: '0' });
      if (!parsed?.success) {
        stats.rejected++;
        continue;
      }
      if (parsed.data.nodeId === nodeId) continue; // this node's own, back from the channel
      const { id: _id, ...event } = parsed.data;
      stats.received++;
      bus.carry(event);
    }
    if (entries.length > MAX_BATCH) stats.rejected += entries.length - MAX_BATCH;
  }

  return {
    /** Starts publishing this node's telemetry and carrying the others'; never waits for Redis. */
    start(): void {
      unlisten = bus.listen(take);
      subscriber.on('message', (from: string, message: string) => {
        if (from === channel && !stopped) read(message);
      });
      subscriber.subscribe(channel).catch((err: unknown) => {
        if (!stopped) logger.warn({ err }, 'cluster: could not subscribe to the telemetry channel');
      });
      publisher.connect().catch(() => {});
    },
    stop(): void {
      stopped = true;
      unlisten?.();
      clearTimeout(timer);
      publisher.disconnect();
      subscriber.disconnect();
    },
    stats: (): TelemetryStats => ({ ...stats }),
  };
}

export type Telemetry = ReturnType<typeof createTelemetry>;
