// At start, the recordings an earlier run of the relay left unfinished, found by their manifests
// (manifest.ts): one it was still writing (the relay was killed or crashed) is finalised into a whole
// container (ffmpeg-stop.ts finalise()) and reported `recovered`, or `failed` when nothing playable is
// left; one whose upload had not finished is handed back for its upload.
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../logger.js';
import { finalise } from './ffmpeg-stop.js';
import type { Manifest, Manifests } from './manifest.js';

/** How long finalising one recovered file may take (a copy of the file: seconds for hours of media). */
const FINALISE_TIMEOUT_MS = 10 * 60_000;
/** How long an ffmpeg of the earlier run still writing the file gets to go (its watchdog stops it within about 2 s). */
const EARLIER_FFMPEG_WAIT_MS = 3000;

export type RecoveryOutcome = { state: 'recovered'; bytes: number } | { state: 'upload'; bytes: number } | { state: 'failed'; error: string };

export interface RecoveryDeps {
  dir: string;
  ffmpeg: string;
  manifests: Manifests;
  logger: Logger;
  muxerOf: (format: Manifest['format']) => string;
  /** Ids this run already has (never touched). */
  isOwn: (id: string) => boolean;
  /** Told of each recording found, once it is settled. */
  settle: (manifest: Manifest, outcome: RecoveryOutcome) => void | Promise<void>;
  /** Aborted on close(): a finalise under way is killed, the rest waits for the next start. */
  signal: AbortSignal;
}

export async function recoverUnfinished(deps: RecoveryDeps): Promise<void> {
  const { manifests, invalid } = await deps.manifests.list();
  for (const name of invalid) deps.logger.warn({ file: name }, 'RECORDINGS_DIR holds a recording manifest that cannot be read; left as it is');
  for (const manifest of manifests) {
    if (deps.signal.aborted) return;
    if (deps.isOwn(manifest.id)) continue;
    if (manifest.relayPid !== undefined && manifest.relayPid !== process.pid && (await isRelayRunning(manifest.relayPid))) {
      deps.logger.info({ recordingId: manifest.id, relayPid: manifest.relayPid }, 'a recording of another relay running on this RECORDINGS_DIR: left to it');
      continue;
    }
    const file = path.join(deps.dir, manifest.file);
    const bytes = await stat(file).then((s) => s.size, () => undefined);
    if (manifest.state === 'stopped') {
      if (manifest.unfinished && bytes) {
        await finalise(deps.ffmpeg, file, deps.muxerOf(manifest.format), { timeoutMs: FINALISE_TIMEOUT_MS, signal: deps.signal }).catch((error: unknown) => {
          deps.logger.warn({ recordingId: manifest.id, error: error instanceof Error ? error.message : String(error) }, 'the recording is kept as ffmpeg left it (playable, without its duration and index)');
        });
        if (deps.signal.aborted) return;
      }
      const finished = await stat(file).then((s) => s.size, () => undefined);
      await deps.settle(manifest, finished === undefined ? { state: 'failed', error: `${manifest.file} is gone from RECORDINGS_DIR; its upload cannot resume` } : { state: 'upload', bytes: finished });
      continue;
    }
    if (manifest.pid !== undefined) await stopEarlierFfmpeg(manifest.pid, file);
    // The SDP the dead run wrote for its ffmpeg is of no further use.
    await rm(path.join(deps.dir, `${manifest.id}.sdp`), { force: true }).catch(() => {});
    if (!bytes) {
      await deps.settle(manifest, { state: 'failed', error: `the relay stopped while it recorded and ${manifest.file} holds nothing to recover` });
      continue;
    }
    try {
      await finalise(deps.ffmpeg, file, deps.muxerOf(manifest.format), { timeoutMs: FINALISE_TIMEOUT_MS, signal: deps.signal });
    } catch (error) {
      if (deps.signal.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      await deps.settle(manifest, { state: 'failed', error: `the relay stopped while it recorded and the file could not be recovered (${message}); it is kept` });
      continue;
    }
    const finished = await stat(file).then((s) => s.size, () => 0);
    await deps.settle(manifest, { state: 'recovered', bytes: finished });
  }
}

/** Whether `pid` is a running Node process (the relay that wrote a manifest, still alive): a pid reused by anything else is not. */
async function isRelayRunning(pid: number): Promise<boolean> {
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const program = command.split('\0')[0] ?? '';
  return program === process.execPath || path.basename(program) === 'node';
}

/** The earlier run's ffmpeg, when it still writes this file (a restart within its watchdog's 2 s): killed. */
async function stopEarlierFfmpeg(pid: number, file: string): Promise<void> {
  const writesIt = async () => {
    // Only an ffmpeg naming this very file: a pid reused by anything else is never signalled.
    const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    return command.split('\0').includes(file);
  };
  const deadline = Date.now() + EARLIER_FFMPEG_WAIT_MS;
  while (await writesIt()) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
