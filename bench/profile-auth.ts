// A CPU profile of the real server under the auth-profile load (GET /api/v1/auth/profile, 8 concurrent),
// with its rate limits counted in Redis when BENCH_REDIS_URL is set: `node --import tsx
// bench/profile-auth.ts`. Prints the server's CPU per request (from /proc) and a WINDOW line for
// bench/profile-summary.ts, like bench/profile-relay.ts.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMs, httpClient, info, postgresReachable, runLoops, scratchPostgresDatabase, startServer } from './lib.js';

const dir = process.env.BENCH_PROFILE_DIR ?? '/tmp';
const ms = Number(process.env.BENCH_PROFILE_MS ?? 6000);
const redisUrl = process.env.BENCH_REDIS_URL;
const nodeArgs = (process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []).concat(process.env.BENCH_NO_PROFILE ? [] : ['--cpu-prof', `--cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL ?? 250}`, `--cpu-prof-dir=${dir}`]);
if (!(await postgresReachable())) throw new Error('PostgreSQL at BENCH_DATABASE_URL is not reachable');
const db = await scratchPostgresDatabase('bench_profile');
// BENCH_LIMITS_IN_MEMORY=1 without BENCH_REDIS_URL: the same limits counted in memory (what Redis itself costs).
const highLimits = { RATE_LIMIT_AUTH_PER_MIN: '1000000', RATE_LIMIT_REFRESH_PER_MIN: '1000000', RATE_LIMIT_API_PER_MIN: '100000000' };
const limits: Record<string, string> = redisUrl
  ? { REDIS_URL: redisUrl, ...highLimits }
  : process.env.BENCH_LIMITS_IN_MEMORY
    ? highLimits
    : { RATE_LIMIT_AUTH_PER_MIN: '0', RATE_LIMIT_REFRESH_PER_MIN: '0', RATE_LIMIT_API_PER_MIN: '0' };
const server = await startServer({ DATABASE_URL: db.url, MEDIASOUP_WORKERS: '1', ...limits }, { nodeArgs });
const client = httpClient(server.url);
try {
  const tokens: string[] = [];
  for (let i = 0; i < 20; i += 1) {
    const res = await client.request('POST', '/api/v1/auth/register', { username: `bench_user_${i}`, email: `bench${i}@example.com`, password: 'correct horse battery' });
    if (res.status !== 200) throw new Error(`register: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    tokens.push(res.body.data.token);
  }
  let next = 0;
  const task = async () => {
    const res = await client.request('GET', '/api/v1/auth/profile', undefined, { authorization: `Bearer ${tokens[next++ % tokens.length]}` });
    if (res.status !== 200) throw new Error(`profile: HTTP ${res.status}`);
  };
  await runLoops(task, { concurrency: 4, maxCount: 2000, maxMs: 2000 });
  // BENCH_STRACE=<file>: the server's system calls in the window, counted by `strace -c -f` (exact
  // counts whatever the machine's load; strace slows the server, so use BENCH_COUNT, not time).
  const strace = process.env.BENCH_STRACE ? spawn('strace', ['-c', '-f', '-o', process.env.BENCH_STRACE, '-p', String(server.pid)], { stdio: 'ignore' }) : undefined;
  if (strace) await sleep(1000);
  const cpu0 = cpuMs(server.pid);
  const from = process.hrtime.bigint() / 1000n;
  const run = await runLoops(task, { concurrency: 8, maxCount: Number(process.env.BENCH_COUNT ?? 1_000_000), maxMs: ms });
  const cpu = cpuMs(server.pid) - cpu0;
  const to = process.hrtime.bigint() / 1000n;
  if (strace) {
    strace.kill('SIGINT');
    await new Promise((resolve) => strace.once('exit', resolve));
  }
  info(`${redisUrl ? 'with Redis' : 'no Redis'}: ${run.count} requests in ${(run.elapsedMs / 1000).toFixed(1)} s (${run.perSecond.toFixed(0)}/s), server CPU ${((cpu * 1000) / run.count).toFixed(1)} µs/request`);
  console.log(`WINDOW ${run.count} ${from} ${to}`);
} finally {
  client.close();
  await server.stop();
  await db.drop();
}
