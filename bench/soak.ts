// `npm run soak`: a bounded soak of the real server (SOAK_SECONDS, 60 by default): account traffic
// (register, profile, refresh, login, logout) and media lifecycles in parallel, with a few deliberate
// client errors whose codes are expected. Prints requests served, errors by code, p50/p99, and the RSS
// of the server and of its workers at start and end. Fails (exit 1) on any unexpected answer, when the
// registry is not empty at the end, or when RSS grows beyond the stated bounds.
// Set SOAK_DATABASE_URL=postgres://… (an admin URL) to run on a scratch PostgreSQL database instead of PGlite.
// Last line: `BENCH soak-unexpected-errors <n>`.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { bench, BENCH_TOKEN, fakeDtlsParameters, httpClient, info, opusProducerRtpParameters, percentile, rssMb, startServer, type HttpClient } from './lib.js';
import postgres from 'postgres';
import { SOAK_RTC_PORTS } from '../test/support/ports.js';

const SECONDS = Math.max(5, Number(process.env.SOAK_SECONDS ?? 60));
const ACCOUNT_LOOPS = 4;
const MEDIA_LOOPS = 4;
/** RSS growth allowed between the end of the warm-up and the end of the run. */
const SERVER_RSS_BOUND_MB = 150;
const WORKER_RSS_BOUND_MB = 60;

type Area = 'account' | 'media';
interface Tally {
  requests: number;
  latencies: number[];
  expected: Map<string, number>;
  unexpected: Map<string, number>;
  samples: string[];
}
const tally: Record<Area, Tally> = {
  account: { requests: 0, latencies: [], expected: new Map(), unexpected: new Map(), samples: [] },
  media: { requests: 0, latencies: [], expected: new Map(), unexpected: new Map(), samples: [] },
};
const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/**
 * One request. `want` is the status it must get, and `expect` a deliberate error it may get instead
 * (counted as expected); anything else is unexpected.
 */
async function hit(
  client: HttpClient,
  area: Area,
  what: string,
  method: string,
  path: string,
  body: unknown,
  want: number,
  options: { token?: string; expect?: { status: number; code: number | string } } = {},
): Promise<{ status: number; body: any }> {
  const started = performance.now();
  let res: { status: number; body: any };
  try {
    res = await client.request(method, path, body, options.token ? { authorization: `Bearer ${options.token}` } : {});
  } catch (error) {
    tally[area].requests += 1;
    bump(tally[area].unexpected, `${what}:${(error as NodeJS.ErrnoException).code ?? 'no answer'}`);
    throw error;
  }
  tally[area].requests += 1;
  tally[area].latencies.push(performance.now() - started);
  const code = res.body?.code ?? '-';
  if (res.status === want && (area === 'media' || code === 0)) return res;
  if (options.expect && res.status === options.expect.status && code === options.expect.code) {
    bump(tally[area].expected, `${what}:${res.status}/${code}`);
    return res;
  }
  bump(tally[area].unexpected, `${what}:${res.status}/${code}`);
  if (tally[area].samples.length < 5) tally[area].samples.push(`${method} ${path} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  return res;
}

async function accountCycle(client: HttpClient, n: number): Promise<void> {
  const username = `soak_${randomBytes(6).toString('hex')}`;
  const password = `pw-${randomBytes(4).toString('hex')}`;
  const reg = await hit(client, 'account', 'register', 'POST', '/api/v1/auth/register', { username, email: `${username}@example.com`, password }, 200);
  if (reg.status !== 200) return;
  const first = reg.body.data;
  await hit(client, 'account', 'profile', 'GET', '/api/v1/auth/profile', undefined, 200, { token: first.token });
  const refreshed = await hit(client, 'account', 'refresh', 'POST', '/api/v1/auth/refresh-token', { refresh_token: first.refresh_token }, 200);
  // Deliberate: the access token the refresh replaced.
  await hit(client, 'account', 'profile-old-token', 'GET', '/api/v1/auth/profile', undefined, 200, { token: first.token, expect: { status: 401, code: 1002 } });
  if (refreshed.status === 200) await hit(client, 'account', 'profile', 'GET', '/api/v1/auth/profile', undefined, 200, { token: refreshed.body.data.token });
  const login = await hit(client, 'account', 'login', 'POST', '/api/v1/auth/login', { account: username.toUpperCase(), password }, 200);
  if (n % 5 === 0) {
    // Deliberate: a wrong password.
    await hit(client, 'account', 'login-wrong', 'POST', '/api/v1/auth/login', { account: username, password: `${password}x` }, 200, { expect: { status: 401, code: 2003 } });
  }
  if (login.status === 200) {
    await hit(client, 'account', 'logout', 'POST', '/api/v1/auth/logout', undefined, 200, { token: login.body.data.token });
    await hit(client, 'account', 'profile-after-logout', 'GET', '/api/v1/auth/profile', undefined, 200, { token: login.body.data.token, expect: { status: 401, code: 1002 } });
  }
}

let ssrc = 70_000;
async function mediaCycle(client: HttpClient, n: number): Promise<void> {
  const router = await hit(client, 'media', 'router', 'POST', '/internal/v1/routers', {}, 201);
  if (router.status !== 201) return;
  const routerId = router.body.id;
  const [send, recv] = await Promise.all([
    hit(client, 'media', 'transport', 'POST', '/internal/v1/transports', { routerId, direction: 'send' }, 201),
    hit(client, 'media', 'transport', 'POST', '/internal/v1/transports', { routerId, direction: 'recv' }, 201),
  ]);
  await Promise.all([
    hit(client, 'media', 'connect', 'POST', `/internal/v1/transports/${send.body.id}/connect`, { dtlsParameters: fakeDtlsParameters }, 200),
    hit(client, 'media', 'connect', 'POST', `/internal/v1/transports/${recv.body.id}/connect`, { dtlsParameters: fakeDtlsParameters }, 200),
  ]);
  if (n % 4 === 0) {
    // Deliberate: a second connect.
    await hit(client, 'media', 'connect-again', 'POST', `/internal/v1/transports/${send.body.id}/connect`, { dtlsParameters: fakeDtlsParameters }, 200, { expect: { status: 409, code: 'CONFLICT' } });
  }
  const producers = await Promise.all(
    // Two producers on one transport: each its own MID (and ssrc), as a browser's SDP gives them.
    [0, 1].map((i) =>
      hit(client, 'media', 'producer', 'POST', '/internal/v1/producers', { transportId: send.body.id, kind: 'audio', rtpParameters: { ...opusProducerRtpParameters(ssrc++), mid: String(i) } }, 201),
    ),
  );
  const consumers = await Promise.all(
    producers.map((p) => hit(client, 'media', 'consumer', 'POST', '/internal/v1/consumers', { transportId: recv.body.id, producerId: p.body.id, rtpCapabilities: router.body.rtpCapabilities }, 201)),
  );
  await Promise.all(consumers.map((c) => hit(client, 'media', 'resume', 'POST', `/internal/v1/consumers/${c.body.id}/resume`, undefined, 200)));
  await hit(client, 'media', 'close-consumer', 'DELETE', `/internal/v1/consumers/${consumers[0]!.body.id}`, undefined, 204);
  await hit(client, 'media', 'close-producer', 'DELETE', `/internal/v1/producers/${producers[1]!.body.id}`, undefined, 204);
  // Deliberate: the consumer that went with its producer.
  await hit(client, 'media', 'resume-closed', 'POST', `/internal/v1/consumers/${consumers[1]!.body.id}/resume`, undefined, 200, { expect: { status: 404, code: 'NOT_FOUND' } });
  await hit(client, 'media', 'close-router', 'DELETE', `/internal/v1/routers/${routerId}`, undefined, 204);
}

async function loop(cycle: (client: HttpClient, n: number) => Promise<void>, client: HttpClient, until: number): Promise<number> {
  let n = 0;
  while (performance.now() < until && n < 1_000_000) {
    n += 1;
    await cycle(client, n).catch(async () => {
      await sleep(50); // no answer at all: already counted as unexpected
    });
  }
  return n;
}

interface Memory {
  server: number;
  workers: number[];
}

async function memory(client: HttpClient, pid: number): Promise<Memory> {
  const res = await client.request('GET', '/internal/info');
  const pids = (res.body.workers as { pid: number }[]).map((w) => w.pid);
  return { server: rssMb(pid), workers: pids.map((p) => rssMb(p)) };
}

const fmt = (m: Memory) => `server ${m.server.toFixed(0)} MB, workers ${m.workers.map((w) => `${w.toFixed(0)} MB`).join(' + ')}`;

async function main(): Promise<number> {
  let database = 'memory://';
  let drop: (() => Promise<void>) | undefined;
  if (process.env.SOAK_DATABASE_URL) {
    const admin = process.env.SOAK_DATABASE_URL;
    const name = `soak_${randomBytes(5).toString('hex')}`;
    const sql = postgres(admin, { max: 1, onnotice: () => {} });
    await sql.unsafe(`create database ${name}`);
    await sql.end();
    const url = new URL(admin);
    url.pathname = `/${name}`;
    database = url.toString();
    drop = async () => {
      const a = postgres(admin, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    };
  }

  const server = await startServer({
    DATABASE_URL: database,
    MEDIASOUP_WORKERS: '2',
    RTC_MIN_PORT: String(SOAK_RTC_PORTS.min),
    RTC_MAX_PORT: String(SOAK_RTC_PORTS.max),
    RATE_LIMIT_AUTH_PER_MIN: '0',
    RATE_LIMIT_REFRESH_PER_MIN: '0',
    RATE_LIMIT_API_PER_MIN: '0',
  });
  const accountClient = httpClient(server.url, {}, ACCOUNT_LOOPS);
  const mediaClient = httpClient(server.url, { 'x-internal-token': BENCH_TOKEN }, MEDIA_LOOPS * 2);
  const failures: string[] = [];
  try {
    console.log(`soak: ${SECONDS} s on ${database === 'memory://' ? 'PGlite (memory)' : 'PostgreSQL'}, ${ACCOUNT_LOOPS} account loops + ${MEDIA_LOOPS} media loops, 2 workers; server pid ${server.pid}`);
    const atStart = await memory(mediaClient, server.pid);
    const t0 = performance.now();
    const until = t0 + SECONDS * 1000;
    const running = [
      ...Array.from({ length: ACCOUNT_LOOPS }, () => loop(accountCycle, accountClient, until)),
      ...Array.from({ length: MEDIA_LOOPS }, () => loop(mediaCycle, mediaClient, until)),
    ];
    // RSS after a warm-up (JIT, argon2's memory, pools), the baseline for the growth bound.
    await sleep(Math.min(10_000, (SECONDS * 1000) / 6));
    const afterWarmup = await memory(mediaClient, server.pid);
    const cycles = await Promise.all(running);
    const elapsedS = (performance.now() - t0) / 1000;
    await sleep(500); // let the last closes settle
    const atEnd = await memory(mediaClient, server.pid);
    const counts = (await mediaClient.request('GET', '/internal/info')).body.counts as Record<string, number>;

    const all = [...tally.account.latencies, ...tally.media.latencies].sort((a, b) => a - b);
    const requests = tally.account.requests + tally.media.requests;
    const unexpected = [...tally.account.unexpected.values(), ...tally.media.unexpected.values()].reduce((a, b) => a + b, 0);
    const expected = [...tally.account.expected.values(), ...tally.media.expected.values()].reduce((a, b) => a + b, 0);
    const accountCycles = cycles.slice(0, ACCOUNT_LOOPS).reduce((a, b) => a + b, 0);
    const mediaCycles = cycles.slice(ACCOUNT_LOOPS).reduce((a, b) => a + b, 0);

    info(`requests served: ${requests} in ${elapsedS.toFixed(1)} s (${(requests / elapsedS).toFixed(0)}/s): account ${tally.account.requests} (${accountCycles} cycles), media ${tally.media.requests} (${mediaCycles} lifecycles)`);
    for (const area of ['account', 'media'] as const) {
      const lat = [...tally[area].latencies].sort((a, b) => a - b);
      info(`${area}: p50 ${percentile(lat, 50).toFixed(1)} ms, p99 ${percentile(lat, 99).toFixed(1)} ms`);
      info(`${area} expected errors: ${JSON.stringify(Object.fromEntries(tally[area].expected))}`);
      info(`${area} unexpected errors: ${JSON.stringify(Object.fromEntries(tally[area].unexpected))}`);
      for (const sample of tally[area].samples) info(`  e.g. ${sample}`);
    }
    info(`all: p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms`);
    info(`RSS at start: ${fmt(atStart)}`);
    info(`RSS after warm-up: ${fmt(afterWarmup)}`);
    info(`RSS at end: ${fmt(atEnd)}`);
    info(`registry at end: ${JSON.stringify(counts)}`);
    const serverGrowth = atEnd.server - afterWarmup.server;
    const workerGrowth = Math.max(...atEnd.workers.map((w, i) => w - (afterWarmup.workers[i] ?? w)));
    info(`RSS growth after warm-up: server ${serverGrowth.toFixed(1)} MB (bound ${SERVER_RSS_BOUND_MB}), worst worker ${workerGrowth.toFixed(1)} MB (bound ${WORKER_RSS_BOUND_MB})`);

    if (Object.values(counts).some((n) => n !== 0)) failures.push(`registry not empty at the end: ${JSON.stringify(counts)}`);
    if (serverGrowth > SERVER_RSS_BOUND_MB) failures.push(`server RSS grew ${serverGrowth.toFixed(1)} MB > ${SERVER_RSS_BOUND_MB} MB`);
    if (workerGrowth > WORKER_RSS_BOUND_MB) failures.push(`worker RSS grew ${workerGrowth.toFixed(1)} MB > ${WORKER_RSS_BOUND_MB} MB`);
    if (unexpected > 0) failures.push(`${unexpected} unexpected answers`);

    const stopStarted = performance.now();
    await server.stop();
    const stopMs = performance.now() - stopStarted;
    info(`stopped with SIGTERM in ${stopMs.toFixed(0)} ms, exit code ${server.child.exitCode}`);
    if (server.child.exitCode !== 0) failures.push(`server exit code ${server.child.exitCode} after SIGTERM`);

    bench('soak-requests', requests, 'requests');
    bench('soak-requests-per-second', requests / elapsedS, 'req/s');
    bench('soak-expected-errors', expected, 'answers');
    bench('soak-p50', percentile(all, 50), 'ms');
    bench('soak-p99', percentile(all, 99), 'ms');
    bench('soak-server-rss-start', atStart.server, 'MB');
    bench('soak-server-rss-end', atEnd.server, 'MB');
    bench('soak-worker-rss-start', atStart.workers.reduce((a, b) => a + b, 0), 'MB');
    bench('soak-worker-rss-end', atEnd.workers.reduce((a, b) => a + b, 0), 'MB');
    for (const failure of failures) console.log(`FAILED ${failure}`);
    console.log(`BENCH soak-unexpected-errors ${unexpected}`);
    return failures.length ? 1 : 0;
  } finally {
    accountClient.close();
    mediaClient.close();
    await server.stop();
    await drop?.();
  }
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(error);
  console.log('BENCH soak-unexpected-errors -1');
  return 1;
});
