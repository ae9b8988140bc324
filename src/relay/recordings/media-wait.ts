// A recording's ffmpeg starts only once media flows on every track: ffmpeg reads the first packets of
// each stream to set up its output (a VP8 stream's size, Opus's header), and one started on paused
// producers gave up at its 10 s read timeout ("Error initializing output stream") before anyone spoke.
// So a recording of a muted room waits, its consumers paused, until each producer is resumed and sending.
import type { MediaService } from '../media-service.js';

/** How often a waiting recording looks at its producers. */
export const MEDIA_POLL_MS = 250;
/** How long a start looks for the first RTP of producers that are not paused before it answers without ffmpeg. */
export const MEDIA_GRACE_MS = 2000;

type Media = Pick<MediaService, 'getProducer' | 'getStats'>;

/**
 * Whether a producer sends: not paused, and RTP received (its inbound packet count above 0). Not "within
 * the last second": a live sender that stalls for a moment (a loaded machine, a network hiccup) would
 * then hold its recording's ffmpeg back and lose the start of the file.
 */
export async function producerSending(media: Media, producerId: string): Promise<boolean> {
  if (media.getProducer(producerId).producer.paused) return false;
  const stats = (await media.getStats('producer', producerId)) as { type?: string; packetCount?: number }[];
  return stats.some((s) => s.type === 'inbound-rtp' && (s.packetCount ?? 0) > 0);
}

/** Whether every one of the producers sends now; a producer gone answers by throwing (NOT_FOUND). */
export async function mediaFlowing(media: Media, producerIds: readonly string[]): Promise<boolean> {
  const sending = await Promise.all(producerIds.map((id) => producerSending(media, id)));
  return sending.every(Boolean);
}

/**
 * Whether every producer sends, looked at for up to `graceMs`: a producer just made, whose first RTP is
 * on its way, is not taken for a silent one. A paused producer answers false at once, and so does the
 * end of `waiting()`.
 */
export async function mediaFlowingWithin(media: Media, producerIds: readonly string[], graceMs: number, waiting: () => boolean): Promise<boolean> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    if (await mediaFlowing(media, producerIds)) return true;
    if (!waiting() || producerIds.some((id) => media.getProducer(id).producer.paused) || Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, MEDIA_POLL_MS));
  }
}

/**
 * Resolves true once every producer sends, false as soon as `waiting()` says the recording no longer
 * waits (stopped, failed). A producer gone rejects: the recording's own events end it meanwhile.
 */
export async function waitForMedia(media: Media, producerIds: readonly string[], waiting: () => boolean): Promise<boolean> {
  for (;;) {
    if (!waiting()) return false;
    if (await mediaFlowing(media, producerIds)) return waiting();
    await new Promise((resolve) => setTimeout(resolve, MEDIA_POLL_MS));
  }
}
