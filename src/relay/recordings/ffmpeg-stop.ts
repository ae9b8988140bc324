// How a recording's ffmpeg is ended, and how a file it could not finish is made whole. One SIGINT makes
// ffmpeg finish the file (it writes the container's index and duration) as soon as its next RTP packet
// is read; when no RTP comes (producers paused, the sender gone) it sits in that read until its read
// timeout (about 10 s, longer while the consumers' RTCP still arrives). A second SIGINT breaks that read
// at once, but the container's last step is then skipped (no duration, no index: playable, not
// seekable), so the file is copied once more into a finished container (`-c copy`, no re-encoding).
import { spawn, type ChildProcess } from 'node:child_process';
import { rename, rm } from 'node:fs/promises';

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
