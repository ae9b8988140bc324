// How a recording's ffmpeg is ended, and how a file it could not finish is made whole. One SIGINT makes
// ffmpeg finish the file (it writes the container's index and duration) as soon as its next RTP packet
// is read; when no RTP comes (producers paused, the sender gone) it sits in that read until its read
// timeout (about 10 s, longer while the consumers' RTCP still arrives). A second SIGINT breaks that read
// at once, but the container's last step is then skipped (no duration, no index: playable, not
// seekable), so the file is copied once more into a finished container (`-c copy`, no re-encoding).
import { spawn, type ChildProcess } from 'node:child_process';
import { rename, rm } from 'node:fs/promises';
import type { Logger } from '../../logger.js';

/** How long a stop lets ffmpeg take in all before it is killed: well within the 4 s of a shutdown. */
export const STOP_TIMEOUT_MS = 2_000;
/** How long a stop lets ffmpeg finish on its own (it does at once while RTP flows) before breaking its read. */
const STOP_GRACE_MS = 1_000;
/** How long finishing the container of a file ffmpeg could not finish may take. */
const FINALISE_TIMEOUT_MS = 60_000;
/** Within a shutdown's 4 s, all of a stop: grace, kill and finishing the container. */
const SHUTDOWN_STOP = { graceMs: 500, killAfterMs: 1_500, finaliseMs: 1_500 };

export interface StopTimings {
  /** How long ffmpeg gets to finish on its own after the first SIGINT. */
  graceMs: number;
  /** After the first SIGINT, when it is killed whatever it is doing. */
  killAfterMs: number;
}

/** How ffmpeg ended: `finished` wrote its file whole; `interrupted` and `killed` left it to finalise(). */
export type StopOutcome = 'finished' | 'interrupted' | 'killed' | 'gone';

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/**
 * Ends ffmpeg within `killAfterMs` whether RTP flows or not: SIGINT, a second SIGINT once `graceMs`
 * passed (ffmpeg still waiting for RTP), SIGKILL at `killAfterMs`. `exited` resolves when it is gone.
 */
export async function stopFfmpeg(child: ChildProcess, exited: Promise<void>, timings: StopTimings, hooks: { onGrace?: () => void; onKill?: () => void } = {}): Promise<StopOutcome> {
  if (!alive(child)) return 'gone';
  let outcome: StopOutcome = 'finished';
  child.kill('SIGINT');
  const grace = setTimeout(() => {
    if (!alive(child)) return;
    outcome = 'interrupted';
    hooks.onGrace?.();
    child.kill('SIGINT');
  }, timings.graceMs);
  const killer = setTimeout(() => {
    if (!alive(child)) return;
    outcome = 'killed';
    hooks.onKill?.();
    child.kill('SIGKILL');
  }, timings.killAfterMs);
  try {
    await exited;
  } finally {
    clearTimeout(grace);
    clearTimeout(killer);
  }
  return outcome;
}

/**
 * Copies `file` into a finished container of `muxer` (stream copy) and puts it in the file's place;
 * rejects (the file left as it was) when ffmpeg cannot read it, fails, or takes longer than `timeoutMs`
 * or until `signal` aborts.
 */
export async function finalise(ffmpeg: string, file: string, muxer: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
  const dot = file.lastIndexOf('.');
  const temporary = `${file.slice(0, dot)}.finalising${file.slice(dot)}`;
  const child = spawn(ffmpeg, ['-nostdin', '-hide_banner', '-loglevel', 'error', '-i', file, '-map', '0', '-c', 'copy', '-f', muxer, '-y', temporary], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const stop = () => {
    if (alive(child)) child.kill('SIGKILL');
  };
  const timer = setTimeout(stop, options.timeoutMs);
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', (error) => {
        stderr += error.message;
        resolve(null);
      });
      child.once('close', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`ffmpeg could not finalise ${file.slice(file.lastIndexOf('/') + 1)}: ${child.signalCode ? `killed after ${options.timeoutMs} ms or at shutdown` : stderr.trim().split('\n').at(-1)?.slice(0, 300) || `exit code ${code}`}`);
    await rename(temporary, file);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
    await rm(temporary, { force: true }).catch(() => {});
  }
}

export interface RecordingStop {
  /** The ffmpeg that finalises the file (finalise()). */
  ffmpeg: string;
  recordingId: string;
  file: string;
  muxer: string;
  /** A shutdown's stop: shorter timings, and a file it cannot finish in time is left to the next start. */
  shutdown: boolean;
  /** The stop's bound (STOP_TIMEOUT_MS unless the tests shorten it). */
  stopTimeoutMs: number;
  logger: Logger;
}

/**
 * Ends a recording's ffmpeg within its bound whether RTP flows or not; a file ffmpeg could not finish is
 * copied into a finished container. Resolves `true` when a shutdown left the container unfinished (the
 * next start finishes it, then uploads it).
 */
export async function stopRecordingFfmpeg(child: ChildProcess, exited: Promise<void>, stop: RecordingStop): Promise<boolean> {
  const { logger, recordingId, shutdown, stopTimeoutMs } = stop;
  let unfinished = false;
  const timings = shutdown ? { graceMs: SHUTDOWN_STOP.graceMs, killAfterMs: Math.min(stopTimeoutMs, SHUTDOWN_STOP.killAfterMs) } : { graceMs: Math.min(STOP_GRACE_MS, stopTimeoutMs / 2), killAfterMs: stopTimeoutMs };
  const outcome = await stopFfmpeg(child, exited, timings, {
    onKill: () => logger.warn({ recordingId, stopTimeoutMs: timings.killAfterMs }, 'ffmpeg did not finish the recording in time; killed'),
  });
  if (outcome === 'interrupted' || outcome === 'killed') {
    await finalise(stop.ffmpeg, stop.file, stop.muxer, { timeoutMs: shutdown ? SHUTDOWN_STOP.finaliseMs : FINALISE_TIMEOUT_MS }).catch((error: unknown) => {
      unfinished = shutdown;
      const message = error instanceof Error ? error.message : String(error);
      if (shutdown) logger.warn({ recordingId, error: message }, 'the recording\'s container is finished at the next start (playable meanwhile, without its duration and index)');
      else logger.warn({ recordingId, error: message }, 'the recording is kept as ffmpeg left it (playable, without its duration and index)');
    });
  }
  return unfinished;
}
