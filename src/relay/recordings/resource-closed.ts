// A resource's close as the recordings read it from the bus: a `<kind>.closed` event whose `<kind>Id` is
// the resource's id. A recording's track reaches its ffmpeg through the media service's loopback
// transport (createLoopback, connectLoopback, closeLoopback); the recording holds its id and learns of
// its close this way, without naming the transport's kind.
import type { RelayEvent } from '../contract/events.js';

/** When `event` is a resource's close: its id (the event's `<kind>Id`), the close's reason and the kind in words (`plainTransport` gives "plain transport"). */
export function resourceClosed(event: RelayEvent): { id: string; reason: string; what: string } | undefined {
  const kind = /^(\w+)\.closed$/.exec(event.type)?.[1];
  if (kind === undefined || !('reason' in event)) return undefined;
  const id = (event as unknown as Record<string, unknown>)[`${kind}Id`];
  if (typeof id !== 'string') return undefined;
  return { id, reason: String(event.reason), what: kind.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`) };
}
