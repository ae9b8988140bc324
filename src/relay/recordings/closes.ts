// What a close elsewhere in the relay means for a recording under way: the bus tells the recorder, as it
// tells every sink, and this says whether the recording stops (and why) or fails (and with what error).
import type { RelayEvent } from '../contract/events.js';
import type { MediaService } from '../media-service.js';
import type { Recording, StopReason } from './recording.js';

export type CloseOutcome = StopReason | { error: string };

/** The outcome of a close whose own reason is `reason`: the relay's shutdown, the router's close and a worker's death say it, else `fallback`. */
function byReason(reason: string, fallback: CloseOutcome): CloseOutcome {
  return reason === 'shutdown' ? 'shutdown' : reason === 'router_closed' ? 'router_closed' : reason === 'worker_died' ? { error: 'the media worker holding it died' } : fallback;
}

/**
 * How `event` ends the recording `r`: a stop reason, a failure, or undefined when it does not concern
 * it (or another event decides). `media` says which events are the close of a loopback transport.
 */
export function closeOutcome(r: Recording, event: RelayEvent, media: Pick<MediaService, 'loopbackClosed'>): CloseOutcome | undefined {
  const ownTransport = (id: string) => r.tracks.some((t) => t.transportId === id);
  const ownConsumer = (id: string) => r.tracks.some((t) => t.consumerId === id);
  if (event.type === 'router.closed' && event.routerId === r.routerId) return byReason(event.reason, 'router_closed');
  if (event.type === 'producer.closed' && r.producerIds.includes(event.producerId)) {
    // Closed with its transport: the room may be closing (the router's events come after its
    // transports'), so the recording's own consumer and plain transport events decide.
    if (event.reason === 'transport_closed') return undefined;
    return byReason(event.reason, 'producer_closed');
  }
  if (event.type === 'consumer.closed' && ownConsumer(event.consumerId)) {
    // Its plain transport closing took it along: that transport's own event, next, says why (the API,
    // the room closing, the worker). Taken as a failure here, a room's close failed its recordings.
    if (event.reason === 'transport_closed') return undefined;
    return byReason(event.reason, event.reason === 'producer_closed' ? 'producer_closed' : { error: `its consumer closed (${event.reason})` });
  }
  // The close of a track's loopback transport: "its plain transport closed (api)".
  const closed = media.loopbackClosed(event);
  if (closed && ownTransport(closed.id)) return byReason(closed.reason, { error: `its ${closed.what} closed (${closed.reason})` });
  return undefined;
}
