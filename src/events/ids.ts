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
