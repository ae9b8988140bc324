// relay-control: the full resource cycle (router, send + recv transports, connect both, produce,
// consume, resume, close all) on the real server, on a bare Hono wrapper, and in-process on mediasoup.
import http from 'node:http';
import * as mediasoup from 'mediasoup';
import type { types as ms } from 'mediasoup';
import type { RouterMediaCodec } from '../src/relay/engine/codecs.js';
import {
  BASELINE_RTC_PORTS,
  bench,
  BENCH_TOKEN,
  cpuMs,
  fakeDtlsParameters,
  httpClient,
  info,
  opusProducerRtpParameters,
  rssMb,
  runLoops,
  startServer,
  stopThenRethrow,
  type HttpClient,
} from './lib.js';

const SEQ = { concurrency: 1, maxCount: 4000, maxMs: 1500 };
const CONC = { concurrency: 8, maxCount: 20000, maxMs: 5000 };
/** Rounds of bare / ours / ours with a reader, each a short window, so that the machine's drift hits all three alike. */
const ROUNDS = Number(process.env.BENCH_RELAY_ROUNDS ?? 4);
/** Before the first round, each server runs this long at full load: JIT, and the first full GC of a fresh process. */
const WARM_UP = { concurrency: 8, maxCount: 1_000_000, maxMs: Number(process.env.BENCH_WARM_UP_MS ?? 5000) };
const RSS_WINDOW_MS = Number(process.env.BENCH_RSS_WINDOW_MS ?? 30_000);
/**
 * Another checkout of the relay (a `git worktree` of an earlier commit, with node_modules): when set,
 * each round gets a fourth window on that tree's server (no reader), so that where the relay stood
 * then is measured in the same run as now (`relay-control-baseline-tree-ratio`).
 */
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
/**
 * The database of ours and of the baseline tree (their event logs): `memory://` unless set, e.g. a
 * PostgreSQL URL per server (`BENCH_RELAY_DATABASE_URL` for ours, `BENCH_BASELINE_DATABASE_URL` for the
 * baseline), the production set-up of several instances, where the log's writes cost another process.
 */
const DATABASES = { ours: process.env.BENCH_RELAY_DATABASE_URL, then: process.env.BENCH_BASELINE_DATABASE_URL };
const databaseEnv = (url: string | undefined): Record<string, string> => (url ? { DATABASE_URL: url } : {});

function expect(status: number, wanted: number, what: string, body: unknown): void {
  if (status !== wanted) throw new Error(`${what}: HTTP ${status} (wanted ${wanted}): ${JSON.stringify(body)}`);
}

let ssrc = 1000;

/** One cycle over HTTP: 11 requests, every status checked. */
export async function httpCycle(client: HttpClient): Promise<void> {
  const r = await client.request('POST', '/internal/v1/routers', {});
  expect(r.status, 201, 'router', r.body);
  const routerId = r.body.id as string;
  const [s, v] = await Promise.all([
    client.request('POST', '/internal/v1/transports', { routerId, direction: 'send' }),
    client.request('POST', '/internal/v1/transports', { routerId, direction: 'recv' }),
  ]);
  expect(s.status, 201, 'send transport', s.body);
  expect(v.status, 201, 'recv transport', v.body);
  const [cs, cv] = await Promise.all([
    client.request('POST', `/internal/v1/transports/${s.body.id}/connect`, { dtlsParameters: fakeDtlsParameters }),
    client.request('POST', `/internal/v1/transports/${v.body.id}/connect`, { dtlsParameters: fakeDtlsParameters }),
  ]);
  expect(cs.status, 200, 'connect send', cs.body);
  expect(cv.status, 200, 'connect recv', cv.body);
  const p = await client.request('POST', '/internal/v1/producers', {
    transportId: s.body.id,
    kind: 'audio',
    rtpParameters: opusProducerRtpParameters(ssrc++),
  });
  expect(p.status, 201, 'produce', p.body);
  const c = await client.request('POST', '/internal/v1/consumers', {
    transportId: v.body.id,
    producerId: p.body.id,
    rtpCapabilities: r.body.rtpCapabilities,
  });
  expect(c.status, 201, 'consume', c.body);
  const resumed = await client.request('POST', `/internal/v1/consumers/${c.body.id}/resume`);
  expect(resumed.status, 200, 'resume', resumed.body);
  const dc = await client.request('DELETE', `/internal/v1/consumers/${c.body.id}`);
  expect(dc.status, 204, 'close consumer', dc.body);
  const dp = await client.request('DELETE', `/internal/v1/producers/${p.body.id}`);
  expect(dp.status, 204, 'close producer', dp.body);
  const dr = await client.request('DELETE', `/internal/v1/routers/${routerId}`);
  expect(dr.status, 204, 'close router', dr.body);
}

/** The same cycle called directly on mediasoup, no HTTP at all. */
async function inProcessCycle(worker: ms.Worker, webRtcServer: ms.WebRtcServer, mediaCodecs: RouterMediaCodec[]): Promise<void> {
  const router = await worker.createRouter({ mediaCodecs });
  const [send, recv] = await Promise.all([
    router.createWebRtcTransport({ webRtcServer }),
    router.createWebRtcTransport({ webRtcServer }),
  ]);
  await Promise.all([send.connect({ dtlsParameters: fakeDtlsParameters }), recv.connect({ dtlsParameters: fakeDtlsParameters })]);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- upstream mediasoup 3.27's typings (npm run typecheck:upstream) need it
  const producer = await send.produce({ kind: 'audio', rtpParameters: opusProducerRtpParameters(ssrc++) as ms.RtpParameters });
  const consumer = await recv.consume({ producerId: producer.id, rtpCapabilities: router.rtpCapabilities, paused: true });
  await consumer.resume();
  consumer.close();
  producer.close();
  router.close();
}

/** Cycles/s sequential and 8 concurrent; with a server pid, also that process's CPU per cycle. */
async function measure(label: string, task: () => Promise<void>, pid?: number) {
  // Warm-up at full load: a server idle for the other windows has let V8 shrink its young generation
  // (and the keep-alive sockets time out); 2 s of load restores the steady state before measuring.
  await runLoops(task, { concurrency: 8, maxCount: 1_000_000, maxMs: 2000 });
  const seq = await runLoops(task, SEQ);
  const cpu0 = pid ? cpuMs(pid) : 0;
  const conc = await runLoops(task, CONC);
  const cpu = pid ? ` (server process ${((cpuMs(pid) - cpu0) / conc.count).toFixed(2)} ms CPU/cycle)` : '';
  info(`${label.padEnd(10)} sequential ${seq.perSecond.toFixed(0).padStart(5)} cycles/s   8 concurrent ${conc.perSecond.toFixed(0).padStart(5)} cycles/s${cpu}`);
  return { seq: seq.perSecond, conc: conc.perSecond };
}

export async function relayControl(): Promise<void> {
  console.log('relay-control: full resource cycle (11 requests), keep-alive HTTP on 127.0.0.1, one mediasoup worker each');

  // In-process baseline, in this process.
  const worker = await mediasoup.createWorker({ logLevel: 'warn' });
  const webRtcServer = await worker.createWebRtcServer({
    listenInfos: [
      { protocol: 'udp', ip: '127.0.0.1', port: BASELINE_RTC_PORTS.inProcess },
      { protocol: 'tcp', ip: '127.0.0.1', port: BASELINE_RTC_PORTS.inProcess },
    ],
  });
  const codecs: RouterMediaCodec[] = [
    { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 },
    { kind: 'video', mimeType: 'video/VP8', clockRate: 90000 },
  ];
  const inProcess = await measure('in-process', () => inProcessCycle(worker, webRtcServer, codecs));
  worker.close();

  const barePort = String(BASELINE_RTC_PORTS.bare);
  const bare = await startServer({ RTC_MIN_PORT: barePort, RTC_MAX_PORT: barePort }, { script: 'bench/bare-relay-server.ts' });
  const ours = await startServer({ MEDIASOUP_WORKERS: '1', ...databaseEnv(DATABASES.ours) }).catch(stopThenRethrow(bare));
  const then = BASELINE_DIR
    ? await startServer({ MEDIASOUP_WORKERS: '1', ...databaseEnv(DATABASES.then) }, { cwd: BASELINE_DIR }).catch(stopThenRethrow(bare, ours))
    : undefined;
  if (DATABASES.ours || DATABASES.then) info(`databases: ours ${DATABASES.ours ?? 'memory://'}, baseline ${DATABASES.then ?? 'memory://'}`);
  const bareClient = httpClient(bare.url);
  const oursClient = httpClient(ours.url, { 'x-internal-token': BENCH_TOKEN });
  const thenClient = then ? httpClient(then.url, { 'x-internal-token': BENCH_TOKEN }) : undefined;
  try {
    // Rounds of three short windows: bare, ours alone, ours with one event stream reader attached and
    // reading every event (5 per cycle: consumer, producer, 2 transports, router), and a fourth on the
    // baseline tree when there is one; the order flips every round, so that each window of ours sits
    // next to one of bare. A ratio is taken within each round (the machine drifts by more than the
    // difference measured, over minutes) and averaged.
    type Run = { seq: number; conc: number };
    type Round = { bare: Run; ours: Run; withSub: Run; then?: Run };
    const rounds: Round[] = [];
    await runLoops(() => httpCycle(bareClient), WARM_UP);
    await runLoops(() => httpCycle(oursClient), WARM_UP);
    if (thenClient) await runLoops(() => httpCycle(thenClient), WARM_UP);
    let eventsRead = 0;
    const withSubscriber = async (): Promise<Run> => {
      const subscriber = await subscribe(ours.url);
      try {
        return await measure('ours+sub', () => httpCycle(oursClient), ours.pid);
      } finally {
        subscriber.stop();
        eventsRead += subscriber.events();
      }
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      const measured: Partial<Round> = {};
      const steps = [
        async () => (measured.bare = await measure('bare Hono', () => httpCycle(bareClient), bare.pid)),
        async () => (measured.ours = await measure('ours', () => httpCycle(oursClient), ours.pid)),
        async () => (measured.withSub = await withSubscriber()),
      ];
      if (then && thenClient) steps.push(async () => (measured.then = await measure('baseline', () => httpCycle(thenClient), then.pid)));
      for (const step of round % 2 === 0 ? steps : steps.reverse()) await step();
      rounds.push(measured as Round);
      const r = rounds.at(-1)!;
      const thenRatio = r.then ? `, baseline tree/bare ${(r.then.conc / r.bare.conc).toFixed(3)}` : '';
      info(`round ${round + 1}: ours/bare ${(r.ours.conc / r.bare.conc).toFixed(3)}, ours+sub/bare ${(r.withSub.conc / r.bare.conc).toFixed(3)}${thenRatio}`);
    }
    info(`the stream subscriber read ${eventsRead} events`);
    if (eventsRead === 0) throw new Error('the stream subscriber read no event');
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const bareSeq = avg(rounds.map((r) => r.bare.seq));
    const bareConc = avg(rounds.map((r) => r.bare.conc));
    const oursSeq = avg(rounds.map((r) => r.ours.seq));
    const oursConc = avg(rounds.map((r) => r.ours.conc));
    const ratio = (pick: (r: Round) => number) => avg(rounds.map(pick));
    bench('relay-control-inprocess-seq', inProcess.seq, 'cycles/s');
    bench('relay-control-inprocess-c8', inProcess.conc, 'cycles/s');
    bench('relay-control-bare-seq', bareSeq, 'cycles/s');
    bench('relay-control-bare-c8', bareConc, 'cycles/s');
    bench('relay-control-ours-seq', oursSeq, 'cycles/s');
    bench('relay-control-ours-c8', oursConc, 'cycles/s');
    bench('relay-control-vs-bare-ratio-seq', ratio((r) => r.ours.seq / r.bare.seq), 'ratio');
    bench('relay-control-with-subscriber-ratio', ratio((r) => r.withSub.conc / r.bare.conc), 'ratio');
    if (then) {
      info(`baseline tree: ${BASELINE_DIR}`);
      bench('relay-control-baseline-tree-ratio', ratio((r) => r.then!.conc / r.bare.conc), 'ratio');
    }

    // Memory: RSS of the service (node process + its worker) before and after a window of cycles.
    const workerPid = await workerPidOf(oursClient);
    const rss = () => rssMb(ours.pid) + rssMb(workerPid);
    const before = rss();
    const nodeBefore = rssMb(ours.pid);
    const window = await runLoops(() => httpCycle(oursClient), { concurrency: 8, maxCount: 1_000_000, maxMs: RSS_WINDOW_MS });
    const after = rss();
    const nodeAfter = rssMb(ours.pid);
    const counts = (await oursClient.request('GET', '/internal/info')).body?.counts;
    info(
      `RSS over ${(window.elapsedMs / 1000).toFixed(0)} s (${window.count} cycles): node ${nodeBefore.toFixed(1)} -> ${nodeAfter.toFixed(1)} MB, ` +
        `node + worker ${before.toFixed(1)} -> ${after.toFixed(1)} MB; registry afterwards ${JSON.stringify(counts)}`,
    );
    bench('relay-rss-growth-mb', after - before, 'MB');
    bench('relay-control-vs-bare-ratio', ratio((r) => r.ours.conc / r.bare.conc), 'ratio');
  } finally {
    bareClient.close();
    oursClient.close();
    thenClient?.close();
    await Promise.all([bare.stop(), ours.stop(), then?.stop()]);
  }
}

/**
 * One reader of GET /internal/v1/events, counting the events it reads as they come. Over node:http,
 * like the cycles' own client (bench/lib.ts httpClient: the cheapest client, so that what is measured
 * is the server): the reader shares the two cores with the server, and fetch's web streams cost
 * several times node:http's per chunk.
 */
export async function subscribe(url: string): Promise<{ events: () => number; stop: () => void }> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(`${url}/internal/v1/events`, { headers: { 'x-internal-token': BENCH_TOKEN, accept: 'text/event-stream' } }, resolve);
    req.once('error', reject);
  });
  if (res.statusCode !== 200) {
    res.destroy();
    throw new Error(`event stream: HTTP ${res.statusCode}`);
  }
  let count = 0;
  let tail = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    const frames = (tail + chunk).split('\n\n');
    tail = frames.pop() ?? '';
    for (const frame of frames) if (frame.includes('\ndata: ')) count += 1;
  });
  res.on('error', () => {}); // destroyed at the end
  return { events: () => count, stop: () => res.destroy() };
}

async function workerPidOf(client: HttpClient): Promise<number> {
  const res = await client.request('GET', '/internal/info');
  const pid = res.body?.workers?.[0]?.pid;
  if (typeof pid !== 'number') throw new Error(`no worker pid in /internal/info: ${JSON.stringify(res.body)}`);
  return pid;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await relayControl();
}
