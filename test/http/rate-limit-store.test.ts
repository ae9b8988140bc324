// The Redis rate-limit store's switching (issue 32, finding 14) against a private redis-server, in
// process with short intervals: it returns to Redis only after several successful counter writes in a
// row, and a return that fails again soon makes the next probes wait longer, doubling up to a cap.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { rateLimit } from '../../src/http/rate-limit.js';
import { redisStores } from '../../src/http/rate-limit-store.js';
import { OwnRedis } from '../support/redis-server.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';
import { freePort } from '../support/server-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const PROBE_MS = 100;
const STABLE_MS = 1500;
const MAX_PROBE_MS = 300;

interface Line {
  msg: string;
  nextProbeMs?: number;
  probes?: number;
}

describe.skipIf(skipWithout(REDIS_SERVER))('Redis rate-limit store: switching with hysteresis, private redis-server', () => {
  it('returns after 3 successful probes; relapses soon after a return double the probe interval up to its cap; a return that held resets it', async () => {
    const redis = new OwnRedis(await freePort());
    const lines: Line[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
    let fallbacks = 0;
    const stores = redisStores({ url: redis.url, logger, probeMs: PROBE_MS, stableMs: STABLE_MS, maxProbeMs: MAX_PROBE_MS, onFallback: () => (fallbacks += 1) });
    const closedPort = await freePort();
    const refuseWrites = async () => expect(await redis.command('REPLICAOF', '127.0.0.1', closedPort)).toBe('OK');
    const acceptWrites = async () => expect(await redis.command('REPLICAOF', 'NO', 'ONE')).toBe('OK');
    try {
      await redis.start();
      await stores.ready(5000);
      expect(stores.mode()).toBe('redis');
      const store = stores.store('test');
      // Initialised as the middleware does it.
      rateLimit({ perMinute: 1000, trustProxy: 'none', store });

      /** Waits for the return to Redis; ms from now. */
      const returned = async () => {
        const started = performance.now();
        while (stores.mode() !== 'redis') {
          if (performance.now() - started > 10_000) throw new Error('did not return to Redis');
          await sleep(10);
        }
        return performance.now() - started;
      };
      /** Refused writes, one counted increment (answered from memory), and back. */
      const outage = async () => {
        await refuseWrites();
        const hit = await store.increment('client');
        expect(hit.totalHits).toBeGreaterThan(0);
        expect(stores.mode()).toBe('memory-fallback');
        // Probes keep failing while writes are refused: no return on a PING.
        await sleep(3 * PROBE_MS);
        expect(stores.mode()).toBe('memory-fallback');
        await acceptWrites();
        return returned();
      };

      const first = await outage();
      // Three probes in a row, the last two PROBE_MS apart.
      expect(first).toBeGreaterThanOrEqual(2 * PROBE_MS - 5);
      for (let i = 0; i < 3; i++) await outage();
      await sleep(STABLE_MS + 300);
      await outage();

      const fallbackLines = lines.filter((l) => l.msg.startsWith('rate limits: Redis unavailable'));
      const recoveryLines = lines.filter((l) => l.msg.startsWith('rate limits: Redis answers again'));
      // One line and one count per switch, each way.
      expect(fallbackLines).toHaveLength(5);
      expect(recoveryLines).toHaveLength(5);
      expect(fallbacks).toBe(5);
      expect(recoveryLines.map((l) => l.probes)).toEqual([3, 3, 3, 3, 3]);
      // Doubling on each relapse up to the cap, then back to the base after a return that held.
      expect(fallbackLines.map((l) => l.nextProbeMs)).toEqual([PROBE_MS, 2 * PROBE_MS, MAX_PROBE_MS, MAX_PROBE_MS, PROBE_MS]);
    } finally {
      await stores.close();
      await redis.kill();
    }
  }, 60_000);
});
