// A ban's latency on two trees: `A=<dir> B=<dir> node --import tsx bench/ab-ban.ts` (each dir a checkout
// with node_modules, e.g. a `git worktree` of the commit before the account events' outbox). Both
// servers run at once on PostgreSQL, each on a scratch database of its own; each round bans BANS users
// with a live session on each server, one ban at a time, the order of the servers flipping every
// round so that the machine's drift hits both alike.
//   ab-ban-a-median-ms / ab-ban-b-median-ms: POST /internal/v1/users/:id/ban, median over every round.
//   ab-ban-ratio: the mean of the rounds' median(B) / median(A) (with the outbox on B: < 1.2 holds
//   "a ban's latency grows by less than 20 %").
//   ROUNDS (6), BANS (25 per server per round).
import { BENCH_TOKEN, bench, httpClient, info, median, percentile, postgresReachable, scratchPostgresDatabase, startServer, type HttpClient, type ServerProcess } from './lib.js';

const trees = [process.env.A, process.env.B];
if (!trees[0] || !trees[1]) throw new Error('usage: A=<dir> B=<dir> node --import tsx bench/ab-ban.ts');
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const BANS = Number(process.env.BANS ?? 25);

interface Server {
  proc: ServerProcess;
  internal: HttpClient;
  api: HttpClient;
  drop: () => Promise<void>;
}

async function start(cwd: string): Promise<Server> {
  const database = await scratchPostgresDatabase('ab_ban');
  try {
    const proc = await startServer({ DATABASE_URL: database.url, RATE_LIMIT_AUTH_PER_MIN: '0', RATE_LIMIT_REFRESH_PER_MIN: '0', RATE_LIMIT_API_PER_MIN: '0' }, { cwd, timeoutMs: 60_000 });
    return { proc, internal: httpClient(proc.url, { 'x-internal-token': BENCH_TOKEN }), api: httpClient(proc.url), drop: database.drop };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

let serial = 0;
/** Users with a live session each (registration signs in), ready to be banned. */
async function users(server: Server, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 4) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(4, count - i) }, async () => {
        const name = `ab_ban_${process.pid}_${serial++}`;
        const res = await server.api.request('POST', '/api/v1/auth/register', { username: name, email: `${name}@example.com`, password: 'ab-ban-password-1' });
        if (res.status !== 200) throw new Error(`register: HTTP ${res.status} ${JSON.stringify(res.body)}`);
        return res.body.data.user.id as number;
      }),
    );
    ids.push(...batch);
  }
  return ids;
}

/** Each ban's milliseconds, one after the other. */
async function ban(server: Server, ids: number[]): Promise<number[]> {
  const times: number[] = [];
  for (const id of ids) {
    const started = performance.now();
    const res = await server.internal.request('POST', `/internal/v1/users/${id}/ban`, { reason: 'spam' });
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`ban: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }
  return times;
}

if (!(await postgresReachable())) {
  console.error('ab-ban: PostgreSQL is not reachable at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)');
  process.exit(1);
}
const servers: Server[] = [];
try {
  for (const tree of trees) servers.push(await start(tree!));
  const all: number[][] = [[], []];
  const ratios: number[] = [];
  // A first round on each, not counted: connections, JIT, the first plans.
  for (const server of servers) await ban(server, await users(server, 10));
  for (let round = 0; round < ROUNDS; round++) {
    const prepared = await Promise.all(servers.map((server) => users(server, BANS)));
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    const medians: number[] = [0, 0];
    for (const i of order) {
      const times = await ban(servers[i]!, prepared[i]!);
      all[i]!.push(...times);
      medians[i] = median(times);
    }
    ratios.push(medians[1]! / medians[0]!);
    info(`round ${round + 1}: A ${medians[0]!.toFixed(2)} ms, B ${medians[1]!.toFixed(2)} ms (B/A ${ratios.at(-1)!.toFixed(3)})`);
  }
  for (const [i, name] of [[0, 'a'], [1, 'b']] as const) {
    const sorted = [...all[i]!].sort((x, y) => x - y);
    bench(`ab-ban-${name}-median-ms`, Number(median(sorted).toFixed(2)), `ms (p95 ${percentile(sorted, 95).toFixed(2)}; ${sorted.length} bans on ${trees[i]})`);
  }
  const mean = ratios.reduce((sum, r) => sum + r, 0) / ratios.length;
  bench('ab-ban-ratio', Number(mean.toFixed(3)), `B/A, mean of ${ROUNDS} rounds (${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);
} finally {
  for (const server of servers) {
    await server.proc.stop();
    await server.drop();
  }
}
