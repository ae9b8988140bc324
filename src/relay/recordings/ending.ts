// How a recording ends: stopped (the API, max duration, a producer or the room closing, the shutdown) or
// failed (ffmpeg exited or stalled, a worker died). Either way what it holds in the relay is released
// (timers, plain transports and their consumers, ports, the SDP), its manifest says what is left to do
// (nothing, an upload, or a container a shutdown could not finish), and the bus hears of it once.
import { rm } from 'node:fs/promises';
import type { Logger } from '../../logger.js';
import type { RelayBus } from '../events/index.js';
import { stopRecordingFfmpeg } from './ffmpeg-stop.js';
import type { MediaService } from '../media-service.js';
import type { Manifests } from './manifest.js';
import type { PortPairs } from './ports.js';
import { FORMATS, isActive, manifestOf, type Recording, type RecordingFiles, type StopReason } from './recording.js';
import { uploadRecording } from './recording-upload.js';
import type { Uploader } from './upload.js';

export interface EndingDeps {
  media: Pick<MediaService, 'closeLoopback'>;
  bus: RelayBus;
  logger: Logger;
  files: RecordingFiles;
  manifests: Manifests;
  ports: PortPairs;
  uploader: Uploader | undefined;
  /** The recordings listed; the ended ones beyond `keptEnded` are forgotten. */
  recordings: Map<string, Recording>;
  keptEnded: number;
  /** The ffmpeg that finalises a file its recording's ffmpeg could not finish. */
  ffmpeg: string;
  stopTimeoutMs: number;
}

export interface Ending {
  /** Stops the recording (a recording already ending answers that end); resolves once its file is finalised and it reads `stopped`. */
  end: (r: Recording, reason: StopReason) => Promise<void>;
  /** Fails a recording starting or under way: its ffmpeg killed, `recording.failed`, the partial file kept. */
  fail: (r: Recording, error: string) => void;
  /** Closes what a recording holds in the relay and gives its ports back. */
  release: (r: Recording) => Promise<void>;
  /** Uploads a stopped recording's file in the background (recording-upload.ts). */
  upload: (to: Uploader, r: Recording) => void;
  /** Forgets the oldest ended recordings beyond those kept for GET. */
  trim: () => void;
}

export function createEnding(deps: EndingDeps): Ending {
  const { media, bus, logger, files, manifests, uploader, recordings } = deps;
  const upload = (to: Uploader, r: Recording) => uploadRecording(r, { uploader: to, files, manifests, bus, logger });
  const manifestNotWritten = (r: Recording) => (error: unknown) => logger.error({ err: error, recordingId: r.id }, 'recording manifest not written');

  function trim(): void {
    const ended = [...recordings.values()].filter((r) => !isActive(r));
    for (const r of ended.slice(0, Math.max(0, ended.length - deps.keptEnded))) recordings.delete(r.id);
  }

  /** Closes the recording's plain transports (they take its consumers with them): no more RTP or RTCP to its ffmpeg. */
  function closeTransports(r: Recording): void {
    for (const track of r.tracks) {
      if (track.transportId) {
        try {
          media.closeLoopback(track.transportId);
        } catch {
          // Gone already (router closed, worker died).
        }
      }
    }
  }

  function release(r: Recording): Promise<void> {
    for (const timer of r.timers) clearTimeout(timer);
    r.timers = [];
    clearTimeout(r.stallCheck);
    closeTransports(r);
    for (const track of r.tracks) deps.ports.give(track.port);
    return rm(files.pathOf(r.id, 'sdp'), { force: true }).catch(() => {});
  }

  function fail(r: Recording, error: string): void {
    if (!isActive(r) && r.state !== 'starting') return;
    r.state = 'failed';
    r.error = error;
    const child = r.process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    void release(r);
    r.durationMs = Date.now() - r.startedAt.getTime();
    logger.error({ recordingId: r.id, routerId: r.routerId, error, stderr: r.stderr.slice(-2000) }, 'recording failed');
    bus.publish({ type: 'recording.failed', recordingId: r.id, routerId: r.routerId, error, appData: r.appData });
    void manifests.remove(r.id).catch(() => {});
    void files.sizeOf(r).then((bytes) => (r.bytes = bytes));
    trim();
  }

  function end(r: Recording, reason: StopReason): Promise<void> {
    if (r.ending) return r.ending;
    if (r.state !== 'recording' && r.state !== 'starting') return Promise.resolve();
    r.state = 'stopping';
    r.ending = (async () => {
      const child = r.process;
      /** A shutdown left the container unfinished: the next start finishes it (then uploads it). */
      let unfinished = false;
      if (child && !r.gone && child.exitCode === null && child.signalCode === null) {
        // Within its bound whether RTP flows or not; a file ffmpeg could not finish is copied into a finished container.
        const stop = { ffmpeg: deps.ffmpeg, recordingId: r.id, file: files.mediaOf(r), muxer: FORMATS[r.format].muxer, shutdown: reason === 'shutdown', stopTimeoutMs: deps.stopTimeoutMs, logger };
        unfinished = await stopRecordingFfmpeg(child, r.exited!, stop);
      }
      await release(r);
      const durationMs = Date.now() - r.startedAt.getTime();
      const bytes = await files.sizeOf(r);
      // The manifest first: once the recording reads `stopped`, its manifest says what is left to do.
      const owed = !unfinished && uploader !== undefined && bytes > 0;
      if (unfinished) {
        await manifests.save({ ...manifestOf(r), state: 'stopped', unfinished: true, bytes, durationMs }).catch(manifestNotWritten(r));
      } else if (owed) {
        // The upload is owed before it starts: a relay stopped meanwhile resumes it at its next start.
        await manifests.save({ ...manifestOf(r), state: 'stopped', bytes, durationMs }).catch(manifestNotWritten(r));
      } else {
        // Nothing owed: no upload, or a recording stopped before its media ever flowed (no file).
        await manifests.remove(r.id).catch(() => {});
      }
      r.state = 'stopped';
      r.reason = reason;
      r.durationMs = durationMs;
      r.bytes = bytes;
      logger.info({ recordingId: r.id, routerId: r.routerId, reason, bytes: r.bytes, durationMs: r.durationMs }, 'recording stopped');
      bus.publish({ type: 'recording.stopped', recordingId: r.id, routerId: r.routerId, reason, file: r.file, bytes: r.bytes, durationMs: r.durationMs, appData: r.appData });
      if (unfinished && uploader) logger.info({ recordingId: r.id }, 'recording upload deferred to the next start, once its container is finished');
      if (owed) upload(uploader, r);
      trim();
    })();
    return r.ending;
  }

  return { end, fail, release, upload, trim };
}
