// What a node reads of the others in Redis is bounded and checked: a record that is not one (garbage,
// oversized, under another id) is ignored, an expired one trimmed; two processes under one id are
// reported. A private redis-server; the membership alone, without a relay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createMembership, type NodeLoad } from '../../src/relay/cluster/membership.js';
import { OwnRedis } from '../support/redis-server.js';
import { freePort } from '../support/server-process.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';
import { waitFor } from '../support/webrtc/wait.js';

const load = (): Promise<NodeLoad> => Promise.resolve({ routers: 0, transports: 0, consumers: 0, workerCpuMs: 0, draining: false });

describe.skipIf(skipWithout(REDIS_SERVER))('cluster membership records', () => {
  let redis: OwnRedis;
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) } });

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
  });
  afterAll(() => redis.kill());

  it('ignores what is not a record, trims ids whose record expired, and lists the live ones', async () => {
    const prefix = 'junk:';
    const valid = { id: 'other', url: 'http://other:3001', region: null, pipeAddress: null, load: await load(), heartbeatAt: new Date().toISOString(), instance: 'x' };
    await redis.command('SET', `${prefix}node:other`, JSON.stringify(valid), 'PX', 10_000);
    await redis.command('SET', `${prefix}node:garbage`, '{not json', 'PX', 10_000);
    await redis.command('SET', `${prefix}node:huge`, JSON.stringify({ ...valid, id: 'huge', url: 'x'.repeat(20_000) }), 'PX', 10_000);
    await redis.command('SET', `${prefix}node:liar`, JSON.stringify({ ...valid, id: 'someone-else' }), 'PX', 10_000);
    await redis.command('SET', `${prefix}node:extra`, JSON.stringify({ ...valid, id: 'extra', token: 'secret' }), 'PX', 10_000);
    await redis.command('SADD', `${prefix}nodes`, 'other', 'garbage', 'huge', 'liar', 'extra', 'expired');
    const membership = createMembership({ self: { id: 'me', url: 'http://me:3001' }, redisUrl: redis.url, load, logger, prefix, heartbeatMs: 200 });
    try {
      await membership.start();
      const view = membership.view();
      expect(view.degraded).toBe(false);
      expect(view.nodes.map((n) => n.id)).toEqual(['me', 'other']);
      expect(await redis.command('SISMEMBER', `${prefix}nodes`, 'expired')).toBe(0);
      expect(await redis.command('SISMEMBER', `${prefix}nodes`, 'garbage')).toBe(1);
    } finally {
      await membership.stop();
    }
    expect(await redis.command('EXISTS', `${prefix}node:me`)).toBe(0);
  });

  it('finds a node that joined since its last heartbeat when asked (discover), adding it to the view, and reads Redis at most every 250 ms for it', async () => {
    const prefix = 'joined:';
    // A heartbeat far off: only discover() can show this node the newcomer.
    const old = createMembership({ self: { id: 'old', url: 'http://old:3001' }, redisUrl: redis.url, load, logger, prefix, heartbeatMs: 60_000, ttlMs: 120_000 });
    const newcomer = createMembership({ self: { id: 'new', url: 'http://new:3001' }, redisUrl: redis.url, load, logger, prefix, heartbeatMs: 60_000, ttlMs: 120_000 });
    try {
      await old.start();
      expect(await old.discover()).toEqual([]);
      await newcomer.start();
      expect(old.view().nodes.map((n) => n.id)).toEqual(['old']);
      // Within 250 ms of the last read the same (empty) read answers: a flood of misses is not a flood of reads.
      expect(await old.discover()).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const found = await old.discover();
      expect(found.map((n) => n.id)).toEqual(['new']);
      expect(found[0]).toMatchObject({ url: 'http://new:3001' });
      expect(old.view().nodes.map((n) => n.id)).toEqual(['old', 'new']);
      // Already in the view: answered again (the caller compares with the nodes it asked), added once.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await old.discover()).map((n) => n.id)).toEqual(['new']);
      expect(old.view().nodes.map((n) => n.id)).toEqual(['old', 'new']);
    } finally {
      await newcomer.stop();
      await old.stop();
    }
  });

  it('reports two live processes under one id once, and the one that stops leaves the other\'s record', async () => {
    const prefix = 'twins:';
    const first = createMembership({ self: { id: 'twin', url: 'http://one:3001' }, redisUrl: redis.url, load, logger, prefix, heartbeatMs: 100 });
    const second = createMembership({ self: { id: 'twin', url: 'http://two:3001' }, redisUrl: redis.url, load, logger, prefix, heartbeatMs: 100 });
    try {
      await first.start();
      await second.start();
      await new Promise((resolve) => setTimeout(resolve, 600));
      const reports = lines.filter((line) => line.msg.startsWith('cluster: another live process uses this node id'));
      expect(reports.length).toBeGreaterThanOrEqual(1);
      expect(reports.length).toBeLessThanOrEqual(2); // at most once per process
    } finally {
      await first.stop();
    }
    // The second's record stays until it stops (it rewrites it every heartbeat in any case).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await redis.command('EXISTS', `${prefix}node:twin`)).toBe(1);
    await second.stop();
    expect(await redis.command('EXISTS', `${prefix}node:twin`)).toBe(0);
  });

  it('announces a departed node once (one watcher takes the lease), never one whose list is not one, nor one that stopped cleanly', async () => {
    const prefix = 'lost:';
    const record = (id: string, instance: string) => ({ id, url: `http://${id}:3001`, region: null, pipeAddress: null, load: { routers: 1, transports: 0, consumers: 0, workerCpuMs: 0, draining: false }, heartbeatAt: new Date().toISOString(), instance });
    const held = { routerIds: ['r1'], transportIds: ['t1', 't2'], producerIds: [], truncated: false };
    await redis.command('SET', `${prefix}node:dead`, JSON.stringify(record('dead', 'x')), 'PX', 1_500);
    await redis.command('SET', `${prefix}held:dead:x`, JSON.stringify(held), 'PX', 60_000);
    await redis.command('SET', `${prefix}node:liar`, JSON.stringify(record('liar', 'y')), 'PX', 1_500);
    await redis.command('SET', `${prefix}held:liar:y`, JSON.stringify({ ...held, routerIds: Array(20_000).fill('r') }), 'PX', 60_000);
    await redis.command('SADD', `${prefix}nodes`, 'dead', 'liar');
    const told: { watcher: string; nodeId: string; announce: boolean; routerIds: string[] }[] = [];
    const watcher = (id: string) =>
      createMembership({
        self: { id, url: `http://${id}:3001` },
        redisUrl: redis.url,
        load,
        logger,
        prefix,
        heartbeatMs: 100,
        ttlMs: 1_000,
        held: () => ({ routerIds: [], transportIds: [], producerIds: [], truncated: false }),
        onLost: ({ record: lost, held: was, announce }) => told.push({ watcher: id, nodeId: lost.id, announce, routerIds: was.routerIds }),
      });
    const [w1, w2, leaver] = [watcher('w1'), watcher('w2'), watcher('leaver')];
    try {
      // The leaver first: the watchers' first read sees it.
      await leaver.start();
      await Promise.all([w1.start(), w2.start()]);
      // W1's first read may come before W2 registered: its next heartbeat (100 ms) sees W2.
      await waitFor(() => w1.view().nodes.length === 5, { timeoutMs: 1_000, intervalMs: 20, what: 'W1 seeing W2' });
      expect(w1.view().nodes.map((n) => n.id)).toEqual(['w1', 'dead', 'leaver', 'liar', 'w2']);
      await leaver.stop(); // clean: its list goes first
      // Past the records' 1.5 s and a heartbeat.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(told.map((t) => t.nodeId).sort()).toEqual(['dead', 'dead']);
      expect(told.filter((t) => t.announce)).toHaveLength(1);
      expect(told[0]!.routerIds).toEqual(['r1']);
    } finally {
      await Promise.all([w1.stop(), w2.stop()]);
    }
  });
});
