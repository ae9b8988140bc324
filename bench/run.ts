// `npm run bench`: every benchmark in its own process, one after the other, within 14 minutes in all
// (10 until room-capacity, issue 14, added its ~3.5 minutes of 10 s probes).
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { ROOT } from './lib.js';

const BENCHMARKS = [
  { name: 'relay-control', limitMs: 220_000 },
  { name: 'media-fanout', limitMs: 120_000 },
  { name: 'whip', limitMs: 90_000 },
  { name: 'room-capacity', limitMs: 270_000 },
  { name: 'auth-profile', limitMs: 120_000 },
  { name: 'auth-login-loop', limitMs: 60_000 },
  { name: 'introspect', limitMs: 90_000 },
  { name: 'auth-profile-redis', limitMs: 120_000 },
  { name: 'auth-login-loop-redis', limitMs: 60_000 },
  { name: 'startup', limitMs: 120_000 },
  { name: 'events-log', limitMs: 120_000 },
  { name: 'cluster', limitMs: 90_000 },
  { name: 'cluster-pipe', limitMs: 90_000 },
];
const TOTAL_LIMIT_MS = 14 * 60_000;

const started = Date.now();
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`machine: ${os.availableParallelism()} x ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; load average ${load()}`);
const lines: string[] = [];
const failures: string[] = [];

// Each benchmark runs in a process group of its own, which holds whatever it starts (servers, their
// mediasoup workers, load generators): once it has ended, by itself, failed or at its time limit,
// the group is killed, so nothing it started outlives it. A Ctrl-C or SIGTERM here ends the one
// running (SIGTERM: it stops what it started) and skips the rest.
let current: ChildProcess | undefined;
let interrupted: NodeJS.Signals | undefined;
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is empty
  }
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    interrupted = signal;
    current?.kill('SIGTERM');
  });
}
process.once('exit', () => killGroup(current?.pid));

for (const { name, limitMs } of BENCHMARKS) {
  const left = TOTAL_LIMIT_MS - (Date.now() - started);
  if (interrupted) {
    failures.push(`${name}: not run, interrupted (${interrupted})`);
    continue;
  }
  if (left <= 5000) {
    failures.push(`${name}: not run, the 14-minute budget is spent`);
    continue;
  }
  console.log(`\n=== ${name}`);
  const t0 = Date.now();
  const code = await new Promise<number | string>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    current = child;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l.startsWith('BENCH ')));
    });
    let kill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      kill = setTimeout(() => killGroup(child.pid), 5000);
    }, Math.min(limitMs, left));
    child.on('exit', (exitCode, signal) => {
      clearTimeout(timer);
      clearTimeout(kill);
      killGroup(child.pid);
      current = undefined;
      resolve(exitCode ?? signal ?? 'unknown');
    });
  });
  console.log(`=== ${name}: ${code === 0 ? 'done' : `FAILED (${code})`} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (code !== 0) failures.push(`${name}: exit ${code}`);
}

console.log(`\n=== summary (${((Date.now() - started) / 1000).toFixed(0)} s; load average now ${load()})`);
for (const line of lines) console.log(line);
for (const failure of failures) console.log(`FAILED ${failure}`);
process.exitCode = interrupted ? 128 + os.constants.signals[interrupted] : failures.length ? 1 : 0;
