// What the event bus offers and takes (src/events/bus.ts makes it): its interface, its options, its stats.
import type { AnyEvent, BusEvent, EventInput, EventRouters, ResyncReason } from './types.js';
import type { Place } from './ids.js';
import type { SubscribeOptions, Subscription } from './subscription.js';

export type EventListener<E extends BusEvent = AnyEvent> = (event: E) => void;

export interface EventBusStats<Type extends string = string> {
  lastId: string;
  buffered: number;
  bufferSize: number;
  /** Bytes the buffer's segments take outside the JS heap. */
  bufferBytes: number;
  subscribers: number;
  listeners: number;
  published: Partial<Record<Type, number>>;
  overflows: number;
  resyncs: Record<ResyncReason, number>;
  /** Live-only events (published or carried) not streamed: LIVE_SLOTS - 1 of them came since the last durable one. */
  liveDropped: number;
}

export interface EventBus<E extends BusEvent = AnyEvent> {
  /**
   * Stamps the time. A live-only event gets its id, is buffered and delivered synchronously to
   * listeners and subscribers; a durable one (options.durable) goes to options.store, and reaches them
   * when the event log hands it back through deliver(). The input object becomes the event (stamped in
   * place): hand over a fresh object and do not change it later.
   */
  publish(input: EventInput<E>): E;
  /**
   * A live-only event of another process (a cluster node's telemetry), without `id`: given the next
   * live-only id here, buffered and handed to subscribers only (its own process's listeners and
   * followers, the webhook, had it there).
   */
  carry(event: Omit<E, 'id'>): void;
  /**
   * A durable event as the event log returns it, in log order: `payload` is its JSON without `id`.
   * Buffered and delivered to listeners and subscribers with the id durableId(logId).
   */
  deliver(logId: number, payload: string): void;
  /**
   * Where this bus joins the log (the newest log id when it started following it): a resume from an
   * id before it is not in the buffer (the stream replays it from the log).
   */
  start(afterLogId: number): void;
  /**
   * Whether a reader resuming after `lastEventId` finds what follows in the buffer (`buffer`), must
   * first be replayed the durable events after `logId` from the log (`log`), or gets `resync`.
   */
  locate(lastEventId: string): Place;
  subscribe(options?: SubscribeOptions): Subscription<E>;
  /**
   * A plain listener of this process's own events (metrics, the recordings): called synchronously as
   * each is published, durable ones before the log gave them an id (their `id` is absent then);
   * returns the unsubscribe.
   */
  listen(listener: EventListener<E>): () => void;
  /**
   * A listener of the events as streams read them (the webhook): every durable event of every
   * instance once the log hands it back, and this process's live-only events, with their ids, in id
   * order; called synchronously; returns the unsubscribe.
   */
  follow(listener: EventListener<E>): () => void;
  /**
   * Ends every subscription and refuses new ones (at shutdown, so open streams let the server close).
   * publish() and listeners keep working: the shutdown's own close events still reach the webhook.
   */
  close(): void;
  stats(): EventBusStats<E['type']>;
}

export interface EventBusOptions<E extends BusEvent = AnyEvent> {
  /** Events kept for replay (EVENTS_BUFFER_SIZE). */
  bufferSize?: number;
  /** Default per-subscriber limit (EVENTS_SUBSCRIBER_MAX_QUEUED). */
  maxQueued?: number;
  /**
   * A subscriber above its limit is cut off when it is still above it this much later (0: at once).
   * Closing a big room publishes thousands of events in one tick; a reader that keeps up drains them
   * within the grace. Memory does not depend on it: unread events are a cursor into the ring.
   */
  overflowGraceMs?: number;
  clock?: () => Date;
  /** Where a throwing listener is reported (it never stops the others nor the publisher). */
  onListenerError?: (error: unknown, event: E) => void;
  /**
   * The routers an event concerns, which filtered subscriptions match against (asked once per
   * publish). By default its `routerId`, else its `routerIds` member.
   */
  routersOf?: (event: E) => EventRouters;
  /** Adds members to each event as it is published, before its id and time (the relay's `nodeId` in a cluster). */
  stamp?: (event: E) => void;
  /**
   * Which types are durable (issue 39): stored in the event log (store) and buffered only when the log
   * hands them back (deliver). Without it every event is live: ids 1, 2, … of this bus alone.
   */
  durable?: (type: string) => boolean;
  /** Where a durable event goes when published: its type and its JSON without `id`. */
  store?: (type: string, payload: string) => void;
}
