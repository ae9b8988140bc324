// cluster: what a relay cluster (issue 40) costs a call, on loopback. Two server processes share a
// Redis (database 13 of the machine's, BENCH_CLUSTER_REDIS_URL to change it) and dial each other:
// - a read forwarded through the node that does not hold the room, against the same read on the holder
//   (interleaved, sequential), as the median difference;
// - POST /routers placed by load against the same creation pinned to the node called
//   (X-Cluster-Forwarded-By), as the median difference: once where the choice keeps the room on the node
//   called (the other one preloaded), once where it sends it to the other node;
// - relay-control's full cycle through one node of the cluster (rooms placed on either, the other's
//   calls forwarded) beside the same cycle on one node alone.
import { Redis } from 'ioredis';
import { httpCycle } from './relay-control.js';
import { bench, BENCH_TOKEN, freePort, httpClient, info, median, percentile, runLoops, startServer, stopThenRethrow, type HttpClient, type ServerProcess } from './lib.js';

const REDIS_URL = process.env.BENCH_CLUSTER_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
const CALLS = Number(process.env.BENCH_CLUSTER_CALLS ?? 2000);
const CYCLE_WINDOW = { concurrency: 8, maxCount: 1_000_000, maxMs: Number(process.env.BENCH_CLUSTER_WINDOW_MS ?? 5000) };
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS ?? 3);
const PIN = { 'x-cluster-forwarded-by': 'bench' };

const p95 = (values: number[]) => percentile([...values].sort((a, b) => a - b), 95);

/** The POST /internal/v1/routers a node answered 201 so far (from its metrics; a forwarded creation counts on both nodes). */
async function roomsAnswered(client: HttpClient): Promise<number> {
  const text = String((await client.request('GET', '/internal/metrics')).body);
  const line = text.split('\n').find((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('method="POST"') && l.includes('route="/internal/v1/routers"') && l.includes('status="201"'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function node(id: string): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({ MEDIASOUP_WORKERS: '1', MEDIASOUP_MAX_ROUTERS: '2000', REDIS_URL, CLUSTER_NODE_ID: id, CLUSTER_NODE_URL: `http://127.0.0.1:${port}` }, { port });
}

async function timed(client: HttpClient, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ ms: number; status: number; body: any }> {
  const started = performance.now();
  const res = await client.request(method, path, body, headers);
  return { ms: performance.now() - started, ...res };
}

export async function cluster(): Promise<void> {
  console.log(`cluster: two relay nodes on loopback sharing ${REDIS_URL}; ${CALLS} calls per figure, then ${ROUNDS} rounds of relay-control windows`);
  // Records of an earlier run's killed nodes would be dialled until they expire (3 s): none is left.
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const stale = await redis.keys('cluster:*');
  if (stale.length > 0) await redis.del(...stale);
  redis.disconnect();

  const a = await node('bench-a');
  const b = await node('bench-b').catch(stopThenRethrow(a));
  const single = await startServer({ MEDIASOUP_WORKERS: '1' }).catch(stopThenRethrow(a, b));
  try {
    const viaA = httpClient(a.url, { 'x-internal-token': BENCH_TOKEN });
    const viaB = httpClient(b.url, { 'x-internal-token': BENCH_TOKEN });
    const alone = httpClient(single.url, { 'x-internal-token': BENCH_TOKEN });
    const deadline = Date.now() + 10_000;
    while ((await viaB.request('GET', '/internal/v1/cluster')).body.nodes.length < 2 || (await viaA.request('GET', '/internal/v1/cluster')).body.nodes.length < 2) {
      if (Date.now() > deadline) throw new Error('the two nodes never saw each other');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // 1. A read on the holder against the same read forwarded by the other node.
    const room = await viaA.request('POST', '/internal/v1/routers', {}, PIN);
    const path = `/internal/v1/routers/${room.body.id}`;
    const onHolder: number[] = [];
    const forwarded: number[] = [];
    for (let i = 0; i < 200; i++) await Promise.all([viaA.request('GET', path), viaB.request('GET', path)]); // warm-up
    for (let i = 0; i < CALLS; i++) {
      const [x, y] = i % 2 === 0 ? [viaA, viaB] : [viaB, viaA];
      const first = await timed(x, 'GET', path);
      const second = await timed(y, 'GET', path);
      if (first.status !== 200 || second.status !== 200) throw new Error(`GET ${path}: ${first.status}, ${second.status}`);
      (x === viaA ? onHolder : forwarded).push(first.ms);
      (y === viaA ? onHolder : forwarded).push(second.ms);
    }
    info(`GET /routers/{id}: on the holder median ${median(onHolder).toFixed(3)} ms (p95 ${p95(onHolder).toFixed(3)}), forwarded ${median(forwarded).toFixed(3)} ms (p95 ${p95(forwarded).toFixed(3)})`);
    bench('cluster-forward-extra-ms', median(forwarded) - median(onHolder), 'ms');
    await viaA.request('DELETE', path);

    // 2. POST /routers placed by load against the same creation pinned to the node called, interleaved; the
    // rooms stay open until the end of each half (as rooms do). First with B holding more rooms than A will
    // (the placed rooms stay on A: the choice alone), then with A holding more (they go to B: the choice and
    // the forwarding). Which node made each placed room is read afterwards.
    const PRELOAD = CALLS / 2;
    const placement = async (preloaded: HttpClient) => {
      const rooms: string[] = [];
      for (let i = 0; i < PRELOAD; i++) rooms.push((await preloaded.request('POST', '/internal/v1/routers', {}, PIN)).body.id);
      const placed: { id: string; ms: number }[] = [];
      const pinned: number[] = [];
      for (let i = 0; i < CALLS / 8; i++) {
        for (const pin of i % 2 === 0 ? [false, true] : [true, false]) {
          const made = await timed(viaA, 'POST', '/internal/v1/routers', {}, pin ? PIN : {});
          if (made.status !== 201) throw new Error(`POST /routers: ${made.status} ${JSON.stringify(made.body)}`);
          if (pin) pinned.push(made.ms);
          else placed.push({ id: made.body.id, ms: made.ms });
          rooms.push(made.body.id);
        }
      }
      const here: number[] = [];
      const there: number[] = [];
      for (const { id, ms } of placed) ((await viaA.request('GET', `/internal/v1/cluster/resources/${id}`, undefined, PIN)).status === 200 ? here : there).push(ms);
      for (const id of rooms) await viaA.request('DELETE', `/internal/v1/routers/${id}`);
      return { pinned, here, there };
    };
    const local = await placement(viaB);
    const remote = await placement(viaA);
    info(
      `POST /routers: pinned to the node called median ${median(local.pinned).toFixed(3)} / ${median(remote.pinned).toFixed(3)} ms; ` +
        `placed and left on the node called ${median(local.here).toFixed(3)} ms (${local.here.length} of ${local.here.length + local.there.length}), ` +
        `placed on the other node ${median(remote.there).toFixed(3)} ms (${remote.there.length} of ${remote.here.length + remote.there.length}, p95 ${p95(remote.there).toFixed(3)})`,
    );
    bench('cluster-placement-extra-ms', median(local.here) - median(local.pinned), 'ms');
    bench('cluster-placed-elsewhere-extra-ms', median(remote.there) - median(remote.pinned), 'ms');

    // 3. relay-control's cycle through A of the cluster against one node alone, alternating windows.
    const ratios: number[] = [];
    const [viaABefore, onBBefore] = [await roomsAnswered(viaA), await roomsAnswered(viaB)];
    for (let round = 0; round < ROUNDS; round++) {
      const windows = round % 2 === 0 ? [alone, viaA] : [viaA, alone];
      const rate = new Map<HttpClient, number>();
      for (const client of windows) {
        await runLoops(() => httpCycle(client), { ...CYCLE_WINDOW, maxMs: 1000 });
        rate.set(client, (await runLoops(() => httpCycle(client), CYCLE_WINDOW)).perSecond);
      }
      info(`round ${round + 1}: one node ${rate.get(alone)!.toFixed(0)} cycles/s, through a node of two ${rate.get(viaA)!.toFixed(0)} cycles/s`);
      ratios.push(rate.get(viaA)! / rate.get(alone)!);
    }
    const [throughA, onB] = [(await roomsAnswered(viaA)) - viaABefore, (await roomsAnswered(viaB)) - onBBefore];
    info(`the cycles' rooms: ${throughA} made through A, ${onB} of them (${((100 * onB) / throughA).toFixed(0)} %) placed on B and their calls forwarded`);
    bench('relay-control-cluster-2-vs-1-ratio', ratios.reduce((s, r) => s + r, 0) / ratios.length, 'ratio');
  } finally {
    await Promise.all([a.stop(), b.stop(), single.stop()]);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await cluster();
}
