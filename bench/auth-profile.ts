// auth-profile: GET /api/v1/auth/profile (token lookup + profile row) on the real server against a
// bare Hono + postgres.js handler doing the same two indexed queries, both on the same real
// PostgreSQL database.
import { bench, cpuMs, httpClient, info, postgresReachable, runLoops, scratchPostgresDatabase, startServer, type HttpClient } from './lib.js';

const USERS = 20;
const SEQ = { concurrency: 1, maxCount: 5000, maxMs: 1500 };
const CONC = { concurrency: 8, maxCount: 50_000, maxMs: 3000 };
/** Rounds of one short window each of bare and ours, order flipped every round (see relay-control). */
const ROUNDS = Number(process.env.BENCH_AUTH_ROUNDS ?? 4);

function profileTask(client: HttpClient, tokens: string[]) {
  let next = 0;
  return async () => {
    const token = tokens[next++ % tokens.length]!;
    const res = await client.request('GET', '/api/v1/auth/profile', undefined, { authorization: `Bearer ${token}` });
    if (res.status !== 200 || res.body?.data?.username === undefined) throw new Error(`profile: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  };
}

async function measure(label: string, task: () => Promise<void>, pid: number) {
  await runLoops(task, { concurrency: 4, maxCount: 500, maxMs: 1000 });
  const seq = await runLoops(task, SEQ);
  const cpu0 = cpuMs(pid);
  const conc = await runLoops(task, CONC);
  const cpuUs = ((cpuMs(pid) - cpu0) * 1000) / conc.count;
  info(`${label.padEnd(10)} sequential ${seq.perSecond.toFixed(0).padStart(5)} req/s   8 concurrent ${conc.perSecond.toFixed(0).padStart(5)} req/s (server process ${cpuUs.toFixed(0)} µs CPU/request)`);
  return { seq: seq.perSecond, conc: conc.perSecond };
}

/**
 * With `redisUrl` the server counts its rate limits in that Redis, the limits on but far above the
 * load (every request pays the Redis round trip, none is refused), and every figure's name ends in -redis.
 */
export async function authProfile(options: { redisUrl?: string } = {}): Promise<void> {
  const suffix = options.redisUrl ? '-redis' : '';
  console.log(`auth-profile${suffix}: GET /api/v1/auth/profile, keep-alive HTTP on 127.0.0.1, PostgreSQL (pool of 10 on both)${options.redisUrl ? `, rate limits counted in Redis at ${options.redisUrl}` : ''}`);
  if (!(await postgresReachable())) throw new Error('PostgreSQL at BENCH_DATABASE_URL is not reachable');
  const db = await scratchPostgresDatabase('bench_profile');
  const limits: Record<string, string> = options.redisUrl
    ? { REDIS_URL: options.redisUrl, RATE_LIMIT_AUTH_PER_MIN: '1000000', RATE_LIMIT_REFRESH_PER_MIN: '1000000', RATE_LIMIT_API_PER_MIN: '100000000' }
    : { RATE_LIMIT_AUTH_PER_MIN: '0', RATE_LIMIT_REFRESH_PER_MIN: '0', RATE_LIMIT_API_PER_MIN: '0' };
  const ours = await startServer({
    DATABASE_URL: db.url,
    MEDIASOUP_WORKERS: '1',
    ...limits,
  }).catch(async (error: unknown) => {
    await db.drop();
    throw error;
  });
  const bare = await startServer({ DATABASE_URL: db.url }, { script: 'bench/bare-auth-server.ts' }).catch(async (error: unknown) => {
    await ours.stop();
    await db.drop();
    throw error;
  });
  const oursClient = httpClient(ours.url);
  const bareClient = httpClient(bare.url);
  try {
    const tokens: string[] = [];
    for (let i = 0; i < USERS; i += 1) {
      const res = await oursClient.request('POST', '/api/v1/auth/register', {
        username: `bench_user_${i}`,
        email: `bench${i}@example.com`,
        password: 'correct horse battery',
      });
      if (res.status !== 200) throw new Error(`register: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      tokens.push(res.body.data.token);
    }
    // The machine drifts by more than the difference measured over minutes: each window of ours sits
    // next to one of bare, the ratio is taken within each round and averaged over the rounds.
    type Run = { seq: number; conc: number };
    const rounds: { bare: Run; ours: Run }[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const measured: Partial<{ bare: Run; ours: Run }> = {};
      const steps = [
        async () => (measured.bare = await measure('bare', profileTask(bareClient, tokens), bare.pid)),
        async () => (measured.ours = await measure('ours', profileTask(oursClient, tokens), ours.pid)),
      ];
      for (const step of round % 2 === 0 ? steps : steps.reverse()) await step();
      rounds.push(measured as { bare: Run; ours: Run });
      info(`round ${round + 1}: ours/bare ${(measured.ours!.conc / measured.bare!.conc).toFixed(3)}`);
    }
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const oursConc = avg(rounds.map((r) => r.ours.conc));
    const bareConc = avg(rounds.map((r) => r.bare.conc));
    const oursSeq = avg(rounds.map((r) => r.ours.seq));
    const bareSeq = avg(rounds.map((r) => r.bare.seq));
    const ratio = (pick: (r: { bare: Run; ours: Run }) => number) => avg(rounds.map(pick));
    bench(`auth-profile-bare-seq${suffix}`, bareSeq, 'req/s');
    bench(`auth-profile-bare-c8${suffix}`, bareConc, 'req/s');
    bench(`auth-profile-ours-seq${suffix}`, oursSeq, 'req/s');
    bench(`auth-profile-ours-c8${suffix}`, oursConc, 'req/s');
    bench(`auth-profile-ratio-seq${suffix}`, ratio((r) => r.ours.seq / r.bare.seq), 'ratio');
    bench(`auth-profile-ratio${suffix}`, ratio((r) => r.ours.conc / r.bare.conc), 'ratio');
  } finally {
    oursClient.close();
    bareClient.close();
    await Promise.all([ours.stop(), bare.stop()]);
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await authProfile();
}
