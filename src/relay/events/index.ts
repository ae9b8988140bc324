// The relay's events in one piece: the bus, the stream sub-app and (when configured) the webhook,
// built from config.events, with the two halves of their shutdown.
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import { createEventBus, type EventBus } from '../../events/bus.js';
import { createEventStreams, type EventStreams } from '../../events/sse.js';
import type { ResyncEvent as BusResyncEvent } from '../../events/types.js';
import { createWebhookSink, type WebhookSink, type WebhookStats } from '../../events/webhook.js';
import { eventSchemas, routersOf, type RelayEvent, type ResyncEvent } from '../contract/events.js';

export { createEventStreams, type EventStreams } from '../../events/sse.js';
export { signWebhookBody } from '../../events/webhook.js';
export type { RelayEvent, RelayEventInput, RelayEventType, RelayStreamEvent } from '../contract/events.js';

/** The bus of the relay's events. */
export type RelayBus = EventBus<RelayEvent>;

/** The bus makes `resync` itself: the catalog's schema of it must say what the bus makes. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const resyncAgrees: Same<ResyncEvent, BusResyncEvent> = true;
void resyncAgrees;

/** A bus for the relay's events (with no sink: the media service's own when none is given). */
export function createRelayBus(options: { bufferSize?: number; maxQueued?: number; onListenerError?: (error: unknown, event: RelayEvent) => void } = {}): RelayBus {
  // The process has one bus (src/compose.ts): an event of another area's catalog (auth.*) concerns
  // no router, so a stream filtered by routerId does not get it (an empty list, not relay-wide).
  return createEventBus<RelayEvent>({ ...options, routersOf: (event) => (event.type in eventSchemas ? routersOf(event) : []) });
}

export interface RelayEventsInfo {
  lastId: string;
  buffered: number;
  streams: number;
  webhook: (WebhookStats & { enabled: true }) | { enabled: false };
}

export interface RelayEvents {
  bus: RelayBus;
  streams: EventStreams;
  webhook: WebhookSink<RelayEvent> | undefined;
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
export function createRelayEvents(config: Config['events'], logger: Logger): RelayEvents {
  const bus = createRelayBus({
    bufferSize: config.bufferSize,
    maxQueued: config.subscriberMaxQueued,
    onListenerError: (err, event) => logger.error({ err, eventType: event.type }, 'an event listener threw; the other sinks got the event'),
  });
  const streams = createEventStreams(bus, {
    heartbeatMs: config.heartbeatS * 1000,
    maxStreams: config.maxStreams,
    maxQueued: config.subscriberMaxQueued,
    logger,
  });
  const webhook = config.webhook
    ? createWebhookSink<RelayEvent>({ url: config.webhook.url, secret: config.webhook.secret, batchMax: config.webhook.batchMax, queueMax: config.webhook.queueMax, logger })
    : undefined;
  if (webhook) bus.listen((event) => webhook.enqueue(event));
  return {
    bus,
    streams,
    webhook,
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
      await webhook?.stop({ deadlineMs });
    },
  };
}
