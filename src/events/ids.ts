// Event ids (issue 39): decimal integers, strictly increasing in the order a reader gets events, the
// same for a durable event on every instance. A durable event's id is its event-log id times
// LIVE_SLOTS; the live-only events (telemetry, never stored) that an instance streams after it take the
// ids in between: after durable id D·LIVE_SLOTS come D·LIVE_SLOTS + 1, + 2, … So an id says which
// durable events came before it (floor(id / LIVE_SLOTS)), and a reader resuming from any id, on any
// instance, is replayed every durable event after that one.

/** Ids per durable event: the live-only events one instance can stream between two durable ones, plus one. */
export const LIVE_SLOTS = 1_000_000;

/** The id of the durable event stored as `logId` in the event log. */
export function durableId(logId: number): number {
  return logId * LIVE_SLOTS;
}

/** The log id of the last durable event at or before `id`. */
export function durableBefore(id: number): number {
  return Math.floor(id / LIVE_SLOTS);
}

/** An id a client sent back (Last-Event-ID), or undefined when it cannot be one of ours. */
export function parseEventId(text: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** Where a reader resuming after an id finds what follows (EventBus.locate). */
export type Place = { from: 'buffer' } | { from: 'log'; logId: number } | { from: 'resync'; reason: 'unknown_id' | 'too_old' };

/**
 * Where a reader resuming after `lastEventId` finds what follows, given a bus's state: the newest id it
 * issued, the log id of the newest durable event it holds, the id of the newest event its buffer
 * dropped, and whether it follows an event log.
 */
export function locateId(lastEventId: string, bus: { headId: number; lastDurable: number; droppedId: number; logged: boolean }): Place {
  const id = parseEventId(lastEventId);
  if (id === undefined) return { from: 'resync', reason: 'unknown_id' };
  if (id > bus.headId) {
    // Never issued here: a durable id beyond the log's, or, without a log, beyond this bus's. A live-only
    // id of another instance after the same durable event: from now on.
    if (!bus.logged || durableBefore(id) > bus.lastDurable) return { from: 'resync', reason: 'unknown_id' };
    return { from: 'buffer' };
  }
  // Every event after the newest one that left the buffer is in it; durable ones before it are in the log.
  if (id >= bus.droppedId) return { from: 'buffer' };
  if (!bus.logged) return { from: 'resync', reason: 'too_old' };
  return { from: 'log', logId: durableBefore(id) };
}
