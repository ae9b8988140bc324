// Relay nodes that share one Redis know each other: three server processes and a private redis-server.
// A node killed drops out when its record expires, one stopped cleanly removes it at once; with Redis
// gone the nodes keep serving, say `degraded`, and heal without a restart when it is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnRedis } from '../support/redis-server.js';
import { freePort, SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';

interface ClusterAnswer {
  enabled: boolean;
  nodeId: string | null;
  degraded: boolean;
  nodes: { id: string; self: boolean; url: string; region: string | null; pipeAddress: string | null; load: { routers: number; transports: number; consumers: number; workerCpuMs: number; draining: boolean }; heartbeatAt: string; heartbeatAgeMs: number }[];
}

const headers = { 'X-Internal-Token': SERVER_TOKEN };

async function cluster(server: ServerProcess): Promise<ClusterAnswer> {
  const res = await fetch(`${server.url}/internal/v1/cluster`, { headers });
  expect(res.status).toBe(200);
  return (await res.json()) as ClusterAnswer;
}

/** Polls `server`'s view until `check` holds (at most `ms`); returns the view that held and how long it took. */
async function until(server: ServerProcess, check: (view: ClusterAnswer) => boolean, ms = 10_000): Promise<{ view: ClusterAnswer; tookMs: number }> {
  const started = performance.now();
  let view = await cluster(server);
  while (!check(view)) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms; last view: ${JSON.stringify(view)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    view = await cluster(server);
  }
  return { view, tookMs: performance.now() - started };
}

const ids = (view: ClusterAnswer) => view.nodes.map((node) => node.id);

describe.skipIf(skipWithout(REDIS_SERVER))('relay nodes sharing a Redis', () => {
  let redis: OwnRedis;
  const servers: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let c: ServerProcess;
  const node = (id: string) => ({
    REDIS_URL: redis.url,
    CLUSTER_NODE_ID: id,
    // Not dialled yet: the nodes only know each other so far.
    CLUSTER_NODE_URL: `http://${id}.cluster.test:3001`,
    CLUSTER_REGION: id === 'node-a' ? 'ams' : 'fra',
  });
  const start = async (id: string) => {
    const server = await startServer(node(id));
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    [a, b, c] = await Promise.all([start('node-a'), start('node-b'), start('node-c')]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await redis.kill();
  });

  it('each node lists every node with its load; a room and a drain show in the load the others read', { timeout: 40_000 }, async () => {
    for (const server of [a, b, c]) {
      const { view } = await until(server, (v) => v.nodes.length === 3);
      expect(ids(view)[0]).toBe(view.nodeId);
      expect(view.nodes.filter((n) => n.self).map((n) => n.id)).toEqual([view.nodeId]);
      expect(ids(view).sort()).toEqual(['node-a', 'node-b', 'node-c']);
      expect(view).toMatchObject({ enabled: true, degraded: false });
    }
    const { view } = await until(a, (v) => v.nodes.length === 3);
    const nodeB = view.nodes.find((n) => n.id === 'node-b')!;
    expect(nodeB).toMatchObject({ self: false, url: 'http://node-b.cluster.test:3001', region: 'fra', pipeAddress: null, load: { routers: 0, draining: false } });
    expect(nodeB.heartbeatAgeMs).toBeLessThan(3_000);
    expect(nodeB.load.workerCpuMs).toBeGreaterThan(0);
    expect(view.nodes[0]).toMatchObject({ id: 'node-a', region: 'ams' });

    const info = (await (await fetch(`${a.url}/internal/info`, { headers })).json()) as { cluster: unknown };
    expect(info.cluster).toEqual({ enabled: true, nodeId: 'node-a', degraded: false, nodes: 3 });

    // Made on B itself: these nodes' URLs are never dialled, so no room is placed on another node (a call
    // marked as forwarded is answered where it lands).
    const router = await fetch(`${b.url}/internal/v1/routers`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'X-Cluster-Forwarded-By': 'test' }, body: '{}' });
    expect(router.status).toBe(201);
    await until(a, (v) => v.nodes.find((n) => n.id === 'node-b')?.load.routers === 1);
    expect((await fetch(`${c.url}/internal/v1/drain`, { method: 'POST', headers })).status).toBe(202);
    await until(a, (v) => v.nodes.find((n) => n.id === 'node-c')?.load.draining === true);
  });

  it('a node killed drops out when its record expires; one stopped removes its record at once; a new process under an id rejoins', { timeout: 60_000 }, async () => {
    c.child.kill('SIGKILL');
    await c.exited;
    const killed = await until(a, (v) => !ids(v).includes('node-c'));
    // Its record expires 3 s after its last heartbeat, read within a heartbeat (1 s) of that.
    expect(killed.tookMs).toBeLessThan(6_000);
    expect(ids(killed.view)).toEqual(['node-a', 'node-b']);

    await b.stop();
    expect(await redis.command('EXISTS', 'cluster:node:node-b')).toBe(0);
    expect(await redis.command('SISMEMBER', 'cluster:nodes', 'node-b')).toBe(0);
    await until(a, (v) => !ids(v).includes('node-b'), 3_000);

    c = await start('node-c');
    const back = await until(a, (v) => ids(v).includes('node-c'));
    expect(back.view.nodes.find((n) => n.id === 'node-c')?.load.draining).toBe(false);
  });

  it('with Redis gone a node serves what it knows and says degraded; Redis back, it registers again without a restart', { timeout: 60_000 }, async () => {
    await until(a, (v) => v.nodes.length === 2 && !v.degraded);
    await redis.kill();
    const lost = await until(a, (v) => v.degraded, 8_000);
    expect(lost.tookMs).toBeLessThan(5_000);
    // The nodes last known: itself and node-c.
    expect(ids(lost.view)).toEqual(['node-a', 'node-c']);
    const info = (await (await fetch(`${a.url}/internal/info`, { headers })).json()) as { cluster: unknown };
    expect(info.cluster).toMatchObject({ enabled: true, degraded: true });
    const metrics = await (await fetch(`${a.url}/internal/metrics`, { headers })).text();
    expect(metrics).toMatch(/^relay_cluster_degraded 1$/m);
    expect(metrics).toMatch(/^relay_cluster_degraded_total [1-9]/m);
    // Calls go on: Redis is not on their path.
    const router = await fetch(`${a.url}/internal/v1/routers`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'X-Cluster-Forwarded-By': 'test' }, body: '{}' });
    expect(router.status).toBe(201);
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);

    await redis.start();
    const healed = await until(a, (v) => !v.degraded && v.nodes.length === 2, 10_000);
    expect(healed.tookMs).toBeLessThan(5_000);
    expect(healed.view.nodes.find((n) => n.self)?.load.routers).toBe(1);
    expect(await redis.command('EXISTS', 'cluster:node:node-a')).toBe(1);
    const warnings = a.logLines().filter((line) => line.msg.startsWith('cluster: Redis unreachable'));
    expect(warnings).toHaveLength(1);

    // The telemetry channel is subscribed to again: another node's score published now reaches A's stream.
    const abort = new AbortController();
    const stream = await fetch(`${a.url}/internal/v1/events?types=producer.score`, { headers, signal: abort.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    const score = { type: 'producer.score', time: '2026-12-03 10:00:00', nodeId: 'node-x', producerId: 'p1', transportId: 't1', routerId: 'r1', appData: {}, score: [{ ssrc: 1, score: 10 }] };
    let reading = reader.read();
    try {
      const deadline = Date.now() + 5_000;
      while (!text.includes('"nodeId":"node-x"') && Date.now() < deadline) {
        await redis.command('PUBLISH', 'cluster:telemetry', JSON.stringify([score]));
        const chunk = await Promise.race([reading, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 250))]);
        if (chunk === undefined) continue;
        if (chunk.value) text += new TextDecoder().decode(chunk.value);
        reading = reader.read();
      }
    } finally {
      reading.catch(() => {}); // the read left pending ends with the abort
      abort.abort();
    }
    expect(text).toContain('"nodeId":"node-x"');
  });

  it('a single relay (no CLUSTER_NODE_URL) says so', async () => {
    const single = await startServer({});
    servers.push(single);
    expect(await cluster(single)).toEqual({ enabled: false, nodeId: null, degraded: false, nodes: [] });
    const info = (await (await fetch(`${single.url}/internal/info`, { headers })).json()) as { cluster: unknown };
    expect(info.cluster).toEqual({ enabled: false, nodeId: null, degraded: false, nodes: 0 });
  });
});
