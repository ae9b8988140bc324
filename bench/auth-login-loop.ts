// auth-login-loop: a storm of logins (argon2id verification) while a second client polls /healthz;
// the health check must stay fast because hashing runs off the event loop.
import { setTimeout as sleep } from 'node:timers/promises';
import { bench, httpClient, info, percentile, postgresReachable, runLoops, scratchPostgresDatabase, startServer, type HttpClient } from './lib.js';

const LOGIN_CONCURRENCY = 8;
const STORM = { maxCount: 2000, maxMs: 10_000 };
const POLL_INTERVAL_MS = 5;

async function pollHealthz(client: HttpClient, until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!until() && latencies.length < 20_000) {
    const s = performance.now();
    const res = await client.request('GET', '/healthz');
    latencies.push(performance.now() - s);
    if (res.status !== 200) throw new Error(`healthz: HTTP ${res.status}`);
    await sleep(POLL_INTERVAL_MS);
  }
  return latencies.sort((a, b) => a - b);
}

/** With `redisUrl`: rate limits and the per-account failure limit on (far above the load) and counted in that Redis; figures end in -redis. */
export async function authLoginLoop(options: { redisUrl?: string } = {}): Promise<void> {
  const suffix = options.redisUrl ? '-redis' : '';
  console.log(`auth-login-loop${suffix}: ${LOGIN_CONCURRENCY} concurrent login loops for up to ${STORM.maxMs / 1000} s, /healthz polled every ${POLL_INTERVAL_MS} ms on its own connection${options.redisUrl ? `, rate limits counted in Redis at ${options.redisUrl}` : ''}`);
  if (!(await postgresReachable())) throw new Error('PostgreSQL at BENCH_DATABASE_URL is not reachable');
  const db = await scratchPostgresDatabase('bench_login');
  const limits: Record<string, string> = options.redisUrl
    ? { REDIS_URL: options.redisUrl, RATE_LIMIT_AUTH_PER_MIN: '1000000', RATE_LIMIT_REFRESH_PER_MIN: '1000000', RATE_LIMIT_API_PER_MIN: '1000000', LOGIN_FAILURES_PER_ACCOUNT: '1000000' }
    : { RATE_LIMIT_AUTH_PER_MIN: '0', RATE_LIMIT_REFRESH_PER_MIN: '0', RATE_LIMIT_API_PER_MIN: '0' };
  const server = await startServer({
    DATABASE_URL: db.url,
    MEDIASOUP_WORKERS: '1',
    ...limits,
  }).catch(async (error: unknown) => {
    await db.drop();
    throw error;
  });
  const logins = httpClient(server.url, {}, LOGIN_CONCURRENCY);
  const health = httpClient(server.url, {}, 1);
  try {
    const password = 'correct horse battery';
    const reg = await logins.request('POST', '/api/v1/auth/register', { username: 'storm_user', email: 'storm@example.com', password });
    if (reg.status !== 200) throw new Error(`register: HTTP ${reg.status} ${JSON.stringify(reg.body)}`);

    let idleDone = false;
    const idlePoll = pollHealthz(health, () => idleDone);
    await sleep(2000);
    idleDone = true;
    const idle = await idlePoll;

    let stormDone = false;
    const loadedPoll = pollHealthz(health, () => stormDone);
    const storm = await runLoops(
      async () => {
        const res = await logins.request('POST', '/api/v1/auth/login', { account: 'storm_user', password });
        if (res.status !== 200) throw new Error(`login: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      },
      { concurrency: LOGIN_CONCURRENCY, ...STORM },
    );
    stormDone = true;
    const loaded = await loadedPoll;
    const loginLatencies = storm.latencies.sort((a, b) => a - b);
    info(`logins: ${storm.count} in ${(storm.elapsedMs / 1000).toFixed(1)} s, login p50 ${percentile(loginLatencies, 50).toFixed(0)} ms, p99 ${percentile(loginLatencies, 99).toFixed(0)} ms`);
    info(`/healthz idle:        p50 ${percentile(idle, 50).toFixed(2)} ms, p99 ${percentile(idle, 99).toFixed(2)} ms (${idle.length} polls)`);
    info(`/healthz under login: p50 ${percentile(loaded, 50).toFixed(2)} ms, p99 ${percentile(loaded, 99).toFixed(2)} ms, max ${loaded.at(-1)!.toFixed(2)} ms (${loaded.length} polls)`);
    bench(`auth-logins-per-s${suffix}`, storm.perSecond, 'logins/s');
    bench(`healthz-p99-idle-ms${suffix}`, percentile(idle, 99), 'ms');
    bench(`healthz-p99-under-login-ms${suffix}`, percentile(loaded, 99), 'ms');
  } finally {
    logins.close();
    health.close();
    await server.stop();
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await authLoginLoop();
}
