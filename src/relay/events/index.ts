// The relay's events in one piece: the bus, the stream sub-app and (when configured) the webhook,
// built from config.events, with the two halves of their shutdown.
import type { Config } from '../../config/index.js';
import type { Database } from '../../db/client.js';
import type { Logger } from '../../logger.js';
import { createEventBus, type EventBus } from '../../events/bus.js';
import { randomUUID } from 'node:crypto';
import { durableId } from '../../events/ids.js';
import { createAppender, type Appender } from '../../events/log/appender.js';
import { createDeliveryStore, type DeliveryStore, type ParkedDelivery } from '../../events/log/deliveries.js';
import { createLogDelivery, type LogDelivery } from '../../events/log/delivery.js';
import { createRetention, type Retention } from '../../events/log/retention.js';
import { createEventLog, EVENT_LOG_CHANNEL, type EventLog } from '../../events/log/log.js';
import { createTail, LISTENING_INTERVAL_MS, type Tail } from '../../events/log/tail.js';
import { createEventStreams, type EventStreams } from '../../events/sse.js';
import type { ResyncEvent as BusResyncEvent } from '../../events/types.js';
import { createWebhookSink, isMessageId, type WebhookSink, type WebhookStats } from '../../events/webhook.js';
import { eventSchemas, LIVE_ONLY_TYPES, routersOf, type RelayEvent, type ResyncEvent } from '../contract/events.js';

export { createEventStreams, type EventStreams } from '../../events/sse.js';
export { signWebhookBody } from '../../events/webhook.js';
export type { RelayEvent, RelayEventInput, RelayEventType, RelayStreamEvent } from '../contract/events.js';

/** The bus of the relay's events. */
export type RelayBus = EventBus<RelayEvent>;

/** The bus makes `resync` itself: the catalog's schema of it must say what the bus makes. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const resyncAgrees: Same<ResyncEvent, BusResyncEvent> = true;
void resyncAgrees;

const liveOnly: ReadonlySet<string> = new Set(LIVE_ONLY_TYPES);

/** Whether an event type is kept in the event log: every type but the relay's telemetry (any other area's too). */
export function isDurable(type: string): boolean {
  return !liveOnly.has(type);
}

/** A bus for the relay's events (with no sink: the media service's own when none is given). */
export function createRelayBus(
  options: {
    bufferSize?: number;
    maxQueued?: number;
    onListenerError?: (error: unknown, event: RelayEvent) => void;
    store?: (type: string, payload: string) => void;
    /** A cluster node's id (CLUSTER_NODE_ID): each relay event carries it as `nodeId`. */
    nodeId?: string | undefined;
  } = {},
): RelayBus {
  // The process has one bus (src/compose.ts): an event of another area's catalog (auth.*) concerns
  // no router, so a stream filtered by routerId does not get it (an empty list, not relay-wide).
  const { store, nodeId, ...rest } = options;
  return createEventBus<RelayEvent>({
    ...rest,
    // The relay's own events only: another area's (auth.*) are the same whichever node publishes them.
    // node.lost names the node lost, not the one telling.
    ...(nodeId ? { stamp: (event: RelayEvent) => void (event.type in eventSchemas && !('nodeId' in event) && ((event as { nodeId?: string }).nodeId = nodeId)) } : {}),
    ...(store ? { durable: isDurable, store } : {}),
    routersOf: (event) => (event.type in eventSchemas ? routersOf(event) : []),
  });
}

export interface RelayEventsInfo {
  lastId: string;
  buffered: number;
  streams: number;
  webhook: (WebhookStats & { enabled: true }) | { enabled: false };
}

/** A parked webhook batch as the internal API shows it: event ids in the wire's form. */
export interface WebhookDeliveryView {
  id: string;
  firstEventId: string;
  lastEventId: string;
  events: number;
  attempts: number;
  lastError: string;
  parkedAt: string;
}

/** The parked webhook batches (GET /internal/v1/webhook/deliveries, POST …/{id}/redeliver). */
export interface WebhookDeliveries {
  list(options: { status: 'failed'; limit: number }): Promise<WebhookDeliveryView[]>;
  /** Asks for a parked batch to be sent again: the batch, or why not. */
  redeliver(id: string): Promise<WebhookDeliveryView | 'unknown' | 'not_failed'>;
}

export interface RelayEvents {
  bus: RelayBus;
  /** The event log, its writer and its follower (issue 39); absent without a database (a bus of its own). */
  log: { log: EventLog; appender: Appender; tail: Tail } | undefined;
  /** Joins the event log (before anything is published): the bus follows it from its newest event. */
  start(): Promise<void>;
  streams: EventStreams;
  /** The webhook's in-memory sink: every event without a database, the live-only ones with it. */
  webhook: WebhookSink<RelayEvent> | undefined;
  /** The webhook's durable part, from the event log under a lease (with a database and a webhook). */
  delivery: { delivery: LogDelivery; store: DeliveryStore } | undefined;
  deliveries: WebhookDeliveries;
  retention: Retention | undefined;
  /** For /internal/info. */
  info(): RelayEventsInfo;
  /** Shutdown, first step (before server.close()): ends the open streams, which would hold the server open. */
  endStreams(): void;
  /** Shutdown, last step (after the media closed, so its `shutdown` events are sent): flushes the webhook. */
  flush(options?: { deadlineMs?: number }): Promise<void>;
}

/**
 * @example
 * const events = createRelayEvents(config.events, logger)
 * internal.route('/v1', events.streams.routes)   // GET /internal/v1/events, behind the token guard
 * registerEventMetrics(registry, events)         // { bus, streams, webhook }
 * // bridge.ts: events.bus.publish({ type: 'router.closed', routerId, appData, reason })
 */
export function createRelayEvents(config: Config['events'], logger: Logger, database?: Database, nodeId?: string): RelayEvents {
  const log = database ? createEventLog(database) : undefined;
  const appender = log ? createAppender({
        log,
        onStored: (lastId, events) => {
          tail?.stored(lastId, events);
          delivery?.wake();
        },
        logger,
      }) : undefined;
  const bus = createRelayBus({
    bufferSize: config.bufferSize,
    maxQueued: config.subscriberMaxQueued,
    onListenerError: (err, event) => logger.error({ err, eventType: event.type }, 'an event listener threw; the other sinks got the event'),
    ...(appender ? { store: appender.enqueue } : {}),
    nodeId,
  });
  const listen = database?.listen;
  const tail = log ? createTail({ log, deliver: (logId, payload) => bus.deliver(logId, payload), logger, ...(listen ? { intervalMs: LISTENING_INTERVAL_MS } : {}) }) : undefined;
  let unlisten: (() => Promise<void>) | undefined;
  const streams = createEventStreams(bus, {
    heartbeatMs: config.heartbeatS * 1000,
    maxStreams: config.maxStreams,
    maxQueued: config.subscriberMaxQueued,
    logger,
    ...(log && tail ? { log, tail } : {}),
  });
  const webhook = config.webhook
    ? createWebhookSink<RelayEvent>({ url: config.webhook.url, secret: config.webhook.secret, batchMax: config.webhook.batchMax, queueMax: config.webhook.queueMax, logger })
    : undefined;
  // With the log, durable events go to the webhook from it (one instance, at least once: delivery.ts);
  // this instance's live-only ones still through the in-memory sink, as it publishes them.
  const store = database && config.webhook ? createDeliveryStore(database, { holder: randomUUID(), leaseMs: 10_000, exclusive: database.kind === 'pglite' }) : undefined;
  const delivery =
    log && store && config.webhook
      ? createLogDelivery({ url: config.webhook.url, secret: config.webhook.secret, log, store, batchMax: config.webhook.batchMax, giveUpMs: config.webhook.giveUpMs, logger })
      : undefined;
  if (webhook) bus.follow(delivery ? (event) => !isDurable(event.type) && webhook.enqueue(event) : (event) => webhook.enqueue(event));

  const view = (row: ParkedDelivery): WebhookDeliveryView => ({
    id: row.id,
    firstEventId: String(durableId(row.firstLogId)),
    lastEventId: String(durableId(row.lastLogId)),
    events: row.events,
    attempts: row.attempts,
    lastError: row.lastError,
    parkedAt: row.parkedAt.toISOString(),
  });
  // Parked rows are read from the database also where no webhook is configured now (they stay listed).
  const parkedStore = store ?? (database ? createDeliveryStore(database, { holder: 'none', leaseMs: 0, exclusive: false }) : undefined);
  // Retention keeps what the webhook has not delivered: this instance's cursor when it has a webhook;
  // without one, the cursor while another instance holds the lease (a webhook configured there).
  const retention = log
    ? createRetention({
        log,
        retentionMs: config.retentionMs,
        ...(store ? { delivered: () => store.cursor() } : parkedStore ? { delivered: () => parkedStore.leasedCursor() } : {}),
        logger,
      })
    : undefined;
  const deliveries: WebhookDeliveries = {
    async list({ status, limit }) {
      return parkedStore ? (await parkedStore.list(status, limit)).map(view) : [];
    },
    async redeliver(id) {
      // Not one of ours (a NUL byte, 10 KB of text): unknown, without a query PostgreSQL would refuse.
      if (!parkedStore || !isMessageId(id)) return 'unknown';
      const asked = await parkedStore.requestRedelivery(id);
      if (typeof asked === 'string') return asked;
      delivery?.redeliverSoon();
      return view(asked);
    },
  };
  return {
    bus,
    log: log && appender && tail ? { log, appender, tail } : undefined,
    async start() {
      // Listening before the follower reads where it starts: nothing committed in between goes unheard.
      if (tail && listen) unlisten = await listen(EVENT_LOG_CHANNEL, () => tail.wake());
      const joined = tail ? await tail.start() : undefined;
      if (joined !== undefined) bus.start(joined);
      delivery?.start(joined);
      retention?.start();
    },
    streams,
    webhook,
    delivery: delivery && store ? { delivery, store } : undefined,
    deliveries,
    retention,
    info() {
      const stats = bus.stats();
      return {
        lastId: stats.lastId,
        buffered: stats.buffered,
        streams: streams.open(),
        webhook: webhook ? { enabled: true, ...webhook.stats() } : { enabled: false },
      };
    },
    endStreams() {
      streams.close();
      bus.close();
    },
    async flush({ deadlineMs = 1_000 } = {}) {
      const started = Date.now();
      const left = () => Math.max(0, deadlineMs - (Date.now() - started));
      // The last events (the media's closes) are stored, then handed to the webhook through the bus.
      if (appender && tail) {
        await appender.flush({ deadlineMs: left() });
        await tail.catchUp({ deadlineMs: left() });
      }
      await delivery?.stop({ deadlineMs: left() });
      await webhook?.stop({ deadlineMs: left() });
      await retention?.stop();
      await unlisten?.().catch(() => {});
      await tail?.stop();
    },
  };
}
