// What a reader of the event bus sees (src/events/bus.ts makes them): the subscription, its options
// and filters, and an event as the buffer holds it.
import type { AnyEvent, BusEvent, StreamEventOf } from './types.js';

/** At most this many router ids in one subscription's filter. */
export const MAX_FILTER_ROUTER_IDS = 100;
/** At most this many type patterns in one subscription's filter. */
export const MAX_FILTER_TYPES = 50;

/**
 * Whether an event type passes a type filter: each pattern is a type exactly (`router.closed`), a
 * prefix ending in `.*` (`auth.*`: every type that starts with `auth.`), or `*` (every type).
 */
export function typeMatches(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === type || p === '*' || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

export type SubscriptionEnd = 'closed' | 'overflow';

export interface SubscribeOptions {
  /**
   * Only events about these routers, plus relay-wide ones (worker.restarted, relay.draining, resync).
   * Events that concern no router at all (routersOf gives an empty list: the account area's) do not pass.
   */
  routerIds?: readonly string[];
  /** Only events of these types: exact, or a prefix such as `auth.*` (see typeMatches). Both filters apply when both are given. */
  types?: readonly string[];
  /** Continue after this id: replay what the buffer holds after it, or start with `resync`. */
  lastEventId?: string;
  /** Live events a subscriber may stay behind (for the bus's overflowGraceMs) before it is cut off (default: the bus's). */
  maxQueued?: number;
  /** Start at the head with `resync` for this reason (a stream found the id older than the event log keeps). */
  resync?: 'unknown_id' | 'too_old';
}

/**
 * One reader of the bus. Replayed events are read from the ring buffer (they cost nothing extra);
 * live events it has not read count against `maxQueued`; above it for longer than the bus's
 * overflowGraceMs, or when its place leaves the ring, it ends with `overflow`.
 */
export interface Subscription<E extends BusEvent = AnyEvent> extends AsyncIterable<StreamEventOf<E>> {
  /** The next event, waiting for one; undefined once the subscription has ended. */
  next(): Promise<StreamEventOf<E> | undefined>;
  /** The next event if one is ready now, without waiting. */
  poll(): StreamEventOf<E> | undefined;
  /**
   * The next event as its id, type and JSON text, without parsing it (what a stream writes), if one
   * is ready now. Reads from the same place as poll().
   */
  pollEncoded(): EncodedEvent<E> | undefined;
  /**
   * Resolves true once an event for this subscription is ready (or its place left the buffer, which
   * the next pollEncoded() or poll() ends with `overflow`), false once the subscription has ended.
   * Events about other routers never wake a filtered one. One call at a time.
   */
  ready(): Promise<boolean>;
  /** Whether an event (one replayed from the event log) passes this subscription's filters. */
  accepts(event: { type: string }): boolean;
  /** Stops reading; pending next() calls resolve undefined. */
  close(): void;
  /** Called once when the subscription ends (close, overflow, bus closed). */
  onEnd(listener: (reason: SubscriptionEnd) => void): void;
  readonly ended: SubscriptionEnd | undefined;
  /** Live events published for it and not yet read. */
  readonly pending: number;
  /**
   * The id a client should resume from when it has seen nothing yet on this subscription: the last
   * id issued when it subscribed (or the one it resumed from).
   */
  readonly cursor: string;
  /**
   * The id up to which this subscription has read every event it wants and passed every other one: a
   * client that received all it was given resumes from here without missing anything. Ahead of the
   * last event it read when it is filtered and events of other routers came since (a quiet stream's
   * heartbeat tells the client, so that its Last-Event-ID does not fall out of the buffer).
   */
  readonly position: string;
}

/** An event as the buffer holds it: `json` is JSON.stringify(event), taken when it was published. */
export interface EncodedEvent<E extends BusEvent = AnyEvent> {
  id: string;
  type: E['type'] | 'resync';
  json: string;
}
