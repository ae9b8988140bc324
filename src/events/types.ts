// What the event machinery (bus, ring, stream, webhook) knows of an event, whatever its catalog: a
// type, the id and time the bus stamps on it, and the routers it concerns (for filtered readers).
// A leaf: the relay's catalog (src/relay/contract/events.ts) is one set of such events.

/** Any event the bus carries: its catalog's members, plus the `id` and `time` the bus stamps. */
export interface BusEvent {
  id: string;
  type: string;
  time: string;
}

/** The default catalog: any event with a type, whatever its other members. */
export type AnyEvent = BusEvent & Record<string, unknown>;

/** The routers an event concerns: one id (most events), several, or none (events about the whole relay). */
export type EventRouters = string | readonly string[] | undefined;

/** Why a stream starts with `resync` instead of continuing after its Last-Event-ID. */
export type ResyncReason = 'unknown_id' | 'too_old';

/** Made by the bus itself, never published: the first event of a subscription that cannot continue. */
export interface ResyncEvent {
  id: string;
  type: 'resync';
  time: string;
  reason: ResyncReason;
}

/** What a subscription reads: the catalog's events, and `resync`. */
export type StreamEventOf<E extends BusEvent> = E | ResyncEvent;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What a publisher hands to the bus: an event without `id` and `time`, which the bus assigns. */
export type EventInput<E extends BusEvent> = DistributiveOmit<E, 'id' | 'time'>;

/**
 * The routers of an event as the bus reads them when its creator gives no other rule: the
 * `routerId` member, else the `routerIds` member, else none.
 */
export function routersOfMembers(event: object): EventRouters {
  if ('routerId' in event && typeof event.routerId === 'string') return event.routerId;
  if ('routerIds' in event && Array.isArray(event.routerIds)) return event.routerIds as readonly string[];
  return undefined;
}
