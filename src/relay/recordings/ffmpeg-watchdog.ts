// Ends the recordings' ffmpeg when the relay dies without stopping them (SIGKILL, a crash, the OOM
// killer), which Node cannot ask the kernel for (no PR_SET_PDEATHSIG) and ffmpeg does not notice (its
// stdin at EOF means nothing to it; its RTP read waits about 10 s, longer while RTCP still comes). One
// small `sh` per relay reads the pids to watch from a pipe the relay holds; when the relay dies the
// kernel closes that pipe, and the watchdog stops every ffmpeg still listed: SIGINT, a second SIGINT a
// second later, SIGKILL a second after that. The relay's next start finalises the files (recovery.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../../logger.js';

const SCRIPT = `
trap '' INT TERM HUP
pids=' '
while IFS= read -r line; do
  case "$line" in
    +*) pids="$pids\${line#+} " ;;
    -*) rest=' '; for p in $pids; do [ "$p" = "\${line#-}" ] || rest="$rest$p "; done; pids=$rest ;;
  esac
done
living() { alive=''; for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done; pids=$alive; }
living; [ -z "$pids" ] && exit 0
kill -INT $pids 2>/dev/null; sleep 1
living; [ -z "$pids" ] && exit 0
kill -INT $pids 2>/dev/null; sleep 1
living; [ -z "$pids" ] && exit 0
kill -KILL $pids 2>/dev/null
exit 0
`;

export interface FfmpegWatchdog {
  /** Watches this ffmpeg from now on (the watchdog starts with the first). */
  watch(pid: number): void;
  /** It exited: no longer watched. */
  unwatch(pid: number): void;
  /** Ends the watchdog (after the recordings stopped): it stops whatever is still listed, then exits. */
  close(): void;
}

export function createFfmpegWatchdog(logger: Logger): FfmpegWatchdog {
  const pids = new Set<number>();
  let child: ChildProcess | undefined;
  let closed = false;

  function send(line: string): void {
    if (closed) return;
    if (!child || child.exitCode !== null || child.signalCode !== null || !child.stdin?.writable) {
      const started = spawn('/bin/sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'] });
      started.on('error', (error) => logger.error({ err: error }, 'the ffmpeg watchdog could not start: a killed relay may leave its ffmpeg running'));
      started.stdin.on('error', () => {});
      // Neither the watchdog nor its pipe keeps the relay's process alive.
      started.unref();
      (started.stdin as unknown as { unref?: () => void }).unref?.();
      child = started;
      // A watchdog that died (killed by hand) is replaced with the whole list.
      for (const pid of pids) if (`+${pid}` !== line) started.stdin.write(`+${pid}\n`);
    }
    child.stdin!.write(`${line}\n`);
  }

  return {
    watch(pid) {
      pids.add(pid);
      send(`+${pid}`);
    },
    unwatch(pid) {
      if (!pids.delete(pid)) return;
      if (child && child.exitCode === null && child.signalCode === null) send(`-${pid}`);
    },
    close() {
      closed = true;
      child?.stdin?.end();
    },
  };
}
