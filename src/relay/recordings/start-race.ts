// What a recording's start answers when the recording ends, or loses a part, while it starts: a DELETE
// or a shutdown while it sets up, a producer or the room closing meanwhile. Its setup checks after every
// await whether it still starts (stillStarting), and every resource it makes is recorded on the recording
// before the next await, so the release after the setup has settled closes whatever the race left; the
// POST then answers 404 naming what is gone or 409 saying how the recording ended, never the engine's
// 500 about a transport or consumer the race closed under it.
import { conflict, RelayError } from '../errors.js';
import type { MediaService } from '../media-service.js';

interface Starting {
  readonly id: string;
  readonly routerId: string;
  readonly producerIds: readonly string[];
  readonly state: string;
  readonly reason?: string;
  readonly error?: string;
}

/** The 409 of a recording that ended while it started: its state and why (`reason`, or `error` for a failure). */
export function endedWhileStarting(r: Starting): RelayError {
  const why = r.reason ?? r.error ?? r.state;
  return conflict(`recording ${r.id} ended while it started (${why})`, {
    recordingId: r.id,
    state: r.state,
    reason: 'ended_while_starting',
    ...(r.reason ? { stopReason: r.reason } : {}),
    ...(r.error ? { error: r.error } : {}),
  });
}

/** Throws the 409 once the recording no longer starts: called after every await of its setup. */
export function stillStarting(r: Starting): void {
  if (r.state !== 'starting') throw endedWhileStarting(r);
}

/**
 * The error a failed start answers with: 404 when its router or one of its producers is gone (closed
 * while it started), 409 when the recording itself ended meanwhile, else the failure as it was.
 */
export function startRefusal(media: Pick<MediaService, 'getRouter' | 'getProducer'>, r: Starting, error: unknown): unknown {
  for (const check of [() => media.getRouter(r.routerId), ...r.producerIds.map((id) => () => media.getProducer(id))]) {
    try {
      check();
    } catch (gone) {
      if (gone instanceof RelayError && gone.code === 'NOT_FOUND') return gone;
    }
  }
  if (error instanceof RelayError && error.code === 'CONFLICT') return error;
  if (r.state !== 'starting') return endedWhileStarting(r);
  return error;
}
