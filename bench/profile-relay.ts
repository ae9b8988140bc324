// A CPU profile of one relay server under the relay-control load: `node --import tsx
// bench/profile-relay.ts [bare]`. Starts the server (or the bare baseline) with --cpu-prof, runs the
// 8-concurrent cycle for BENCH_PROFILE_MS (default 8 s) after a warm-up, and prints the server's CPU
// per cycle from /proc (robust to other load on the machine, unlike cycles/s). BENCH_SUBSCRIBER=1
// attaches one event stream reader, as relay-control's "ours+sub"; BENCH_PROFILE_INTERVAL (µs, default
// 250) is the sampling interval: 1000 distorts less, at the price of fewer samples. The .cpuprofile lands
// in BENCH_PROFILE_DIR (default /tmp) for `bench/profile-summary.ts <file> <WINDOW line's 3 numbers>`
// (only the samples of the measured window count) or Chrome's DevTools.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { BASELINE_RTC_PORTS, BENCH_TOKEN, cpuMs, httpClient, info, runLoops, startServer } from './lib.js';
import { httpCycle, subscribe } from './relay-control.js';

const bare = process.argv[2] === 'bare';
const dir = process.env.BENCH_PROFILE_DIR ?? '/tmp';
const ms = Number(process.env.BENCH_PROFILE_MS ?? 8000);
const nodeArgs = process.env.BENCH_NO_PROFILE ? [] : ['--cpu-prof', `--cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL ?? 250}`, `--cpu-prof-dir=${dir}`];
const server = bare
  ? await startServer({ RTC_MIN_PORT: String(BASELINE_RTC_PORTS.bare), RTC_MAX_PORT: String(BASELINE_RTC_PORTS.bare) }, { script: 'bench/bare-relay-server.ts', nodeArgs })
  : await startServer({ MEDIASOUP_WORKERS: '1', ...(process.env.BENCH_PROFILE_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_PROFILE_DATABASE_URL } : {}) }, { nodeArgs });
const client = httpClient(server.url, bare ? {} : { 'x-internal-token': BENCH_TOKEN });
// BENCH_SUBSCRIBER=1: one event stream reader attached and reading, as relay-control's "ours+sub".
const subscriber = process.env.BENCH_SUBSCRIBER && !bare ? await subscribe(server.url) : undefined;
try {
  await runLoops(() => httpCycle(client), { concurrency: 4, maxCount: 400, maxMs: 3000 });
  // BENCH_STRACE=<file>: the server's system calls in the window, counted by `strace -c -f` (exact
  // counts whatever the machine's load; strace slows the server, so use BENCH_COUNT, not time).
  const strace = process.env.BENCH_STRACE ? spawn('strace', ['-c', '-f', '-o', process.env.BENCH_STRACE, '-p', String(server.pid)], { stdio: 'ignore' }) : undefined;
  if (strace) await sleep(1000);
  const cpu0 = cpuMs(server.pid);
  const from = process.hrtime.bigint() / 1000n; // the monotonic clock the profile's timestamps use
  const run = await runLoops(() => httpCycle(client), { concurrency: 8, maxCount: Number(process.env.BENCH_COUNT ?? 1_000_000), maxMs: ms });
  const cpu = cpuMs(server.pid) - cpu0;
  const to = process.hrtime.bigint() / 1000n;
  if (strace) {
    strace.kill('SIGINT');
    await new Promise((resolve) => strace.once('exit', resolve));
  }
  info(`${bare ? 'bare' : 'ours'}: ${run.count} cycles in ${(run.elapsedMs / 1000).toFixed(1)} s, server CPU ${(cpu / run.count).toFixed(3)} ms/cycle`);
  console.log(`WINDOW ${run.count} ${from} ${to}`);
} finally {
  subscriber?.stop();
  client.close();
  await server.stop();
}
