// introspect-ratio: POST /internal/v1/auth/introspect on the real server against a bare Hono +
// postgres.js handler doing one indexed lookup after the same signature check (bench/bare-auth-server.ts),
// both on one real PostgreSQL database, 8 concurrent, rounds alternating. jwt-verify-us: a second
// party's local verification of one access token with jose from the live JWKS (createLocalJWKSet), µs each.
import { performance } from 'node:perf_hooks';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { BENCH_TOKEN, bench, httpClient, info, postgresReachable, runLoops, scratchPostgresDatabase, startServer, type HttpClient } from './lib.js';

const USERS = 20;
const CONC = { concurrency: 8, maxCount: 50_000, maxMs: 3000 };
const ROUNDS = Number(process.env.BENCH_AUTH_ROUNDS ?? 4);

function introspectTask(client: HttpClient, path: string, tokens: string[]) {
  let next = 0;
  return async () => {
    const res = await client.request('POST', path, { token: tokens[next++ % tokens.length]! });
    if (res.status !== 200 || res.body?.active !== true) throw new Error(`introspect: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  };
}

async function measure(label: string, task: () => Promise<void>): Promise<number> {
  await runLoops(task, { concurrency: 4, maxCount: 500, maxMs: 1000 });
  const conc = await runLoops(task, CONC);
  info(`${label.padEnd(10)} 8 concurrent ${conc.perSecond.toFixed(0).padStart(5)} req/s`);
  return conc.perSecond;
}

export async function introspect(): Promise<void> {
  console.log('introspect: POST /internal/v1/auth/introspect, keep-alive HTTP on 127.0.0.1, PostgreSQL (pool of 10 on both); jwt-verify: jose, local JWKS');
  if (!(await postgresReachable())) throw new Error('PostgreSQL at BENCH_DATABASE_URL is not reachable');
  const db = await scratchPostgresDatabase('bench_introspect');
  const ours = await startServer({ DATABASE_URL: db.url, MEDIASOUP_WORKERS: '1', RATE_LIMIT_AUTH_PER_MIN: '0', RATE_LIMIT_REFRESH_PER_MIN: '0', RATE_LIMIT_API_PER_MIN: '0' }).catch(async (error: unknown) => {
    await db.drop();
    throw error;
  });
  const bare = await startServer({ DATABASE_URL: db.url }, { script: 'bench/bare-auth-server.ts' }).catch(async (error: unknown) => {
    await ours.stop();
    await db.drop();
    throw error;
  });
  const oursClient = httpClient(ours.url, { 'X-Internal-Token': BENCH_TOKEN });
  const bareClient = httpClient(bare.url);
  try {
    const tokens: string[] = [];
    for (let i = 0; i < USERS; i += 1) {
      const res = await oursClient.request('POST', '/api/v1/auth/register', { username: `bench_user_${i}`, email: `bench${i}@example.com`, password: 'correct horse battery' });
      if (res.status !== 200) throw new Error(`register: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      tokens.push(res.body.data.token);
    }
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const measured: { bare?: number; ours?: number } = {};
      const steps = [
        async () => (measured.bare = await measure('bare', introspectTask(bareClient, '/introspect', tokens))),
        async () => (measured.ours = await measure('ours', introspectTask(oursClient, '/internal/v1/auth/introspect', tokens))),
      ];
      for (const step of round % 2 === 0 ? steps : steps.reverse()) await step();
      ratios.push(measured.ours! / measured.bare!);
      info(`round ${round + 1}: ours/bare ${ratios.at(-1)!.toFixed(3)}`);
    }
    bench('introspect-ratio', ratios.reduce((a, b) => a + b, 0) / ratios.length, 'ratio');

    // A second party: the JWKS fetched once, every token verified locally.
    const jwks = (await oursClient.request('GET', '/.well-known/jwks.json')).body as JSONWebKeySet;
    const keySet = createLocalJWKSet(jwks);
    const verify = (token: string) => jwtVerify(token, keySet, { algorithms: ['EdDSA'], audience: 'chat-backend' });
    for (let i = 0; i < 500; i += 1) await verify(tokens[i % tokens.length]!);
    const n = 5000;
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1) await verify(tokens[i % tokens.length]!);
    bench('jwt-verify-us', ((performance.now() - t0) * 1000) / n, 'µs');
  } finally {
    oursClient.close();
    bareClient.close();
    await Promise.all([ours.stop(), bare.stop()]);
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await introspect();
}
