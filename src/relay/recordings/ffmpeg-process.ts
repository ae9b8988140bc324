// A recording's ffmpeg: spawned on the SDP (sdp.ts), copying the streams into the file without
// re-encoding and writing each packet through (-flush_packets 1: by default a WebM's clusters sat in its
// buffer for many seconds, and a quiet Ogg's pages longer still, so a live recording's file grows every
// second, which the stall watch relies on). Watched by the watchdog (ffmpeg-watchdog.ts) while it runs;
// its stderr's tail kept for the errors it explains. A start waits until it holds its ports.
import { spawn, type ChildProcess } from 'node:child_process';
import { RelayError } from '../errors.js';
import type { FfmpegWatchdog } from './ffmpeg-watchdog.js';
import { portsBound } from './ports.js';
import type { Recording } from './recording.js';
import { endedWhileStarting } from './start-race.js';

/** How long ffmpeg may take to read its SDP and open its ports. */
const LISTEN_TIMEOUT_MS = 10_000;

export interface FfmpegLaunch {
  /** The ffmpeg to run. */
  ffmpeg: string;
  sdpPath: string;
  output: string;
  muxer: string;
  /** The loopback address its sockets are bound to (rtp-source.ts). */
  listen: string;
  watchdog: FfmpegWatchdog;
}

/**
 * Spawns the recording's ffmpeg and puts it on the recording: `process`, `exited` (resolves once it
 * exited or could not be spawned; `gone` is set then) and the tail of its stderr.
 */
export function spawnFfmpeg(r: Recording, launch: FfmpegLaunch): ChildProcess {
  const child = spawn(
    launch.ffmpeg,
    // -localaddr: its sockets on the loopback address only; the SDP's source filter takes RTP from the relay's address only (rtp-source.ts).
    ['-nostdin', '-hide_banner', '-loglevel', 'error', '-protocol_whitelist', 'file,udp,rtp', '-localaddr', launch.listen, '-fflags', '+genpts', '-analyzeduration', '1000000', '-i', launch.sdpPath, '-map', '0', '-c', 'copy', '-flush_packets', '1', '-f', launch.muxer, '-y', launch.output],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  r.process = child;
  // Stopped by the watchdog if the relay dies without stopping it.
  const { pid } = child;
  if (pid) {
    launch.watchdog.watch(pid);
    child.once('exit', () => launch.watchdog.unwatch(pid));
  }
  child.stderr.on('data', (chunk: Buffer) => (r.stderr = (r.stderr + chunk.toString()).slice(-8192)));
  r.exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      r.stderr += `\n${error.message}`;
      r.gone = true;
      resolve();
    });
    child.once('exit', () => {
      r.gone = true;
      resolve();
    });
  });
  return child;
}

/** Why ffmpeg exited, for the recording's error: its exit code or signal and the last line it wrote. */
export function exitError(r: Recording, child: ChildProcess): string {
  const how = child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
  return `ffmpeg exited (${how})${r.stderr.trim() ? `: ${r.stderr.trim().split('\n').at(-1)!.slice(0, 300)}` : ''}`;
}

/** ffmpeg holds a port once it has read the SDP: a bind of it then fails. */
export async function waitListening(r: Recording, child: ChildProcess, listen: string, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + LISTEN_TIMEOUT_MS;
  for (;;) {
    // Stopped meanwhile (its ffmpeg then exits on the stop's SIGINT): that, not ffmpeg, is the answer.
    if (r.state === 'stopping' || r.state === 'stopped') throw endedWhileStarting(r);
    if (r.gone || child.exitCode !== null || child.signalCode !== null) {
      throw new RelayError('CONFLICT', `ffmpeg could not start the recording: ${r.stderr.trim().slice(-300) || 'it exited'}`, { reason: 'ffmpeg' });
    }
    if (!alive()) throw endedWhileStarting(r);
    if (await portsBound(listen, r.tracks.map((t) => t.port))) return;
    if (Date.now() > deadline) throw new RelayError('MEDIASOUP_ERROR', 'ffmpeg did not open its ports in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
