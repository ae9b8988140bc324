// A recording's ffmpeg starts only once media flows on every track: ffmpeg reads the first packets of
// each stream to set up its output (a VP8 stream's size, Opus's header), and one started on paused
// producers gave up at its 10 s read timeout ("Error initializing output stream") before anyone spoke.
// So a recording of a muted room waits, its consumers paused, until each producer is resumed and sending.
import type { MediaService } from '../index.js';

/** How often a waiting recording looks at its producers. */
export const MEDIA_POLL_MS = 250;

type Media = Pick<MediaService, 'getProducer' | 'getStats'>;

/** Whether a producer sends now: not paused, and RTP received lately (its inbound bitrate above 0). */
export async function producerSending(media: Media, producerId: string): Promise<boolean> {
  if (media.getProducer(producerId).producer.paused) return false;
  const stats = (await media.getStats('producer', producerId)) as { type?: string; bitrate?: number }[];
  return stats.some((s) => s.type === 'inbound-rtp' && (s.bitrate ?? 0) > 0);
}

/** Whether every one of the producers sends now; a producer gone answers by throwing (NOT_FOUND). */
export async function mediaFlowing(media: Media, producerIds: readonly string[]): Promise<boolean> {
  const sending = await Promise.all(producerIds.map((id) => producerSending(media, id)));
  return sending.every(Boolean);
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
