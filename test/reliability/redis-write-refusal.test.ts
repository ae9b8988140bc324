// A Redis that answers PING but refuses writes (issue 32, finding 14), against a real server and a
// private redis-server: the rate limits fall back to per-instance memory once, stay there while the
// counters' own operation keeps failing (no switching back on a PING and out again on the next
// request), and return once when writes work again; one log line and one metric count per switch.
import { describe, expect, it } from 'vitest';
import { OwnRedis } from '../support/redis-server.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';
import { freePort, SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const FALLBACK_LINE = 'rate limits: Redis unavailable';
const RECOVERY_LINE = 'rate limits: Redis answers again';

async function internal(server: ServerProcess, path: string): Promise<string> {
  const res = await fetch(`${server.url}${path}`, { headers: { 'x-internal-token': SERVER_TOKEN } });
  return res.text();
}

async function storeMode(server: ServerProcess): Promise<string> {
  return (JSON.parse(await internal(server, '/internal/info')) as { rate_limits: { store: string } }).rate_limits.store;
}

async function fallbackCount(server: ServerProcess): Promise<number> {
  return Number(/^rate_limit_store_fallback_total (\d+)$/m.exec(await internal(server, '/internal/metrics'))?.[1]);
}

let nextAddress = 1;

/**
 * Cheap rate-limited requests (a malformed refresh token: no database work), one every 20 ms from a
 * new address, and the store's mode every 200 ms, until `stop()`; a request that fails at the socket
 * counts as status 0.
 */
function traffic(server: ServerProcess) {
  let running = true;
  const statuses: number[] = [];
  const modes: string[] = [];
  const requests = (async () => {
    while (running) {
      const res = await fetch(`${server.url}/api/v1/auth/refresh-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${nextAddress++ % 250}` },
        body: JSON.stringify({ refresh_token: 'not-a-token' }),
      }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        () => 0,
      );
      statuses.push(res);
      await sleep(20);
    }
  })();
  const sampling = (async () => {
    while (running) {
      modes.push(await storeMode(server));
      await sleep(200);
    }
  })();
  return {
    statuses,
    modes,
    async stop() {
      running = false;
      await Promise.all([requests, sampling]);
    },
  };
}

interface Fault {
  name: string;
  /** The Redis error code the refused write answers. */
  code: string;
  on(redis: OwnRedis): Promise<unknown>;
  off(redis: OwnRedis): Promise<unknown>;
}

const faults: Fault[] = [
  {
    name: 'a read-only replica of an absent master (writes answer READONLY)',
    code: 'READONLY',
    on: async (redis) => redis.command('REPLICAOF', '127.0.0.1', await freePort()),
    off: (redis) => redis.command('REPLICAOF', 'NO', 'ONE'),
  },
  {
    name: 'maxmemory 1 with noeviction (writes answer OOM)',
    code: 'OOM',
    on: async (redis) => {
      await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
      return redis.command('CONFIG', 'SET', 'maxmemory', '1');
    },
    off: (redis) => redis.command('CONFIG', 'SET', 'maxmemory', '0'),
  },
];

describe.skipIf(skipWithout(REDIS_SERVER))('rate limits on a Redis that answers PING but refuses writes, real server', () => {
  it.each(faults)('$name: one switch to the fallback, held for 4 s, one switch back once writes work; a log line and a count each', async (fault) => {
    const redis = new OwnRedis(await freePort());
    let server: ServerProcess | undefined;
    let load: ReturnType<typeof traffic> | undefined;
    try {
      await redis.start();
      server = await startServer({ REDIS_URL: redis.url, TRUST_PROXY: 'xff', RATE_LIMIT_REFRESH_PER_MIN: '100000', LOG_LEVEL: 'warn' });
      expect(await storeMode(server)).toBe('redis');

      expect(await fault.on(redis)).toBe('OK');
      // The fault is the intended one: PING answers, a write is refused.
      expect(await redis.command('PING')).toBe('PONG');
      const refused = await redis.command('SET', 'probe-of-the-test', '1');
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message.startsWith(fault.code)).toBe(true);

      load = traffic(server);
      await sleep(4000);
      await load.stop();
      const during = load;
      const firstFallback = during.modes.indexOf('memory-fallback');
      console.log(`${fault.code}: ${during.statuses.length} requests; modes sampled ${JSON.stringify(during.modes)}`);
      // Never an error for the client: the limits count in memory instead.
      expect(during.statuses.filter((s) => s !== 401)).toEqual([]);
      // Fell back at the first refused write and stayed there: not one sample back in Redis after it.
      expect(firstFallback).toBeGreaterThanOrEqual(0);
      expect(during.modes.slice(firstFallback).filter((m) => m !== 'memory-fallback')).toEqual([]);
      const lines = server.logLines();
      const fallbacks = lines.filter((l) => l.msg.startsWith(FALLBACK_LINE));
      expect(fallbacks).toHaveLength(1);
      expect(JSON.stringify(fallbacks[0])).toContain(fault.code);
      expect(lines.filter((l) => l.msg.startsWith(RECOVERY_LINE))).toHaveLength(0);
      expect(await fallbackCount(server)).toBe(1);

      // The fault removed: back to Redis within a few probes, once, and it stays there.
      expect(await fault.off(redis)).toBe('OK');
      load = traffic(server);
      const until = Date.now() + 10_000;
      while ((await storeMode(server)) !== 'redis') {
        if (Date.now() > until) throw new Error('did not return to Redis');
        await sleep(100);
      }
      const backAt = load.modes.length;
      await sleep(1500);
      await load.stop();
      expect(load.statuses.filter((s) => s !== 401)).toEqual([]);
      expect(load.modes.slice(backAt).filter((m) => m !== 'redis')).toEqual([]);
      const after = server.logLines();
      expect(after.filter((l) => l.msg.startsWith(RECOVERY_LINE))).toHaveLength(1);
      expect(after.filter((l) => l.msg.startsWith(FALLBACK_LINE))).toHaveLength(1);
      expect(await fallbackCount(server)).toBe(1);
      // Counting in Redis again: the refresh budget's keys are there.
      expect(((await redis.command('KEYS', 'rl:refresh:*')) as string[]).length).toBeGreaterThan(0);
    } finally {
      await load?.stop();
      await server?.stop();
      await redis.kill();
    }
  }, 60_000);
});
