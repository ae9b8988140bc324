// An ffmpeg that stops writing while its RTP still comes (hung, stopped, stuck on its disk) is reaped
// after RECORDINGS_STALL_S. ffmpeg writes each packet through (ffmpeg-process.ts), so a live recording's
// file grows every second; without RTP (producers paused) a still file is no stall.
import type { MediaService } from '../media-service.js';
import type { Recording } from './recording.js';

/** How often a recording's file and its consumers' RTP are looked at for a stall. */
const STALL_CHECK_MS = 1000;

export interface StallWatch {
  media: Pick<MediaService, 'getStats'>;
  /** RECORDINGS_STALL_S in ms. */
  stallMs: number;
  /** The recording's file size so far. */
  sizeOf(r: Recording): Promise<number>;
  /** Told once the recording stalled, with why: it fails the recording. */
  onStall(r: Recording, error: string): void;
}

/** RTP packets the recording's consumers have sent to ffmpeg so far (undefined when a consumer is gone). */
async function packetsSent(media: StallWatch['media'], r: Recording): Promise<number | undefined> {
  let sum = 0;
  for (const track of r.tracks) {
    const stats = await media.getStats('consumer', track.consumerId!).catch(() => undefined);
    if (!stats) return undefined;
    for (const entry of stats as { type?: string; packetCount?: number }[]) if (entry.type === 'outbound-rtp') sum += entry.packetCount ?? 0;
  }
  return sum;
}

/**
 * Reaps a hung ffmpeg: a file that has not grown for RECORDINGS_STALL_S while RTP kept coming to it.
 * The clock runs only from the first check that saw packets sent and no growth. The next check is
 * `r.stallCheck` (cleared when the recording is released).
 */
export function watchForStall(r: Recording, watch: StallWatch): void {
  let bytes = -1;
  let sent: number | undefined;
  let stalledSince: number | undefined;
  const check = async (): Promise<void> => {
    const [nowBytes, nowSent] = await Promise.all([watch.sizeOf(r), packetsSent(watch.media, r)]);
    if (r.state !== 'recording') return;
    const now = Date.now();
    if (nowBytes !== bytes) stalledSince = undefined;
    else if (nowSent !== undefined && sent !== undefined && nowSent > sent) stalledSince ??= now - STALL_CHECK_MS;
    bytes = nowBytes;
    sent = nowSent;
    if (stalledSince !== undefined && now - stalledSince >= watch.stallMs) {
      watch.onStall(r, `ffmpeg stopped writing: ${r.file} stayed at ${bytes} bytes for ${Math.round((now - stalledSince) / 1000)} s while RTP kept coming (killed; the partial file is kept)`);
      return;
    }
    r.stallCheck = setTimeout(() => void check(), STALL_CHECK_MS);
  };
  r.stallCheck = setTimeout(() => void check(), STALL_CHECK_MS);
}
