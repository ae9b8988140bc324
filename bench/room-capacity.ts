// room-capacity (issue 14): how many consumers of one video producer one room holds with under 1 %
// packet loss over a 10 s window, on one worker and spread over two (the producer piped from worker 1
// to worker 2 with `router.pipeToRouter`); and what the pipe adds per packet (latency, worker CPU).
//
// Built at the mediasoup level with the relay's own worker pool (src/relay/engine/pool.ts, relay
// settings from src/config.ts): media enters through a PlainTransport fed by a UDP sender and leaves
// through one PlainTransport per consumer towards UDP sink sockets. The sender and the sinks are the
// load generator, a child process of its own (bench/room-capacity-generator.ts) whose CPU is printed
// beside the workers' (`worker.getResourceUsage()`): on 2 cores it competes with the workers. The
// capacity ramps count arrivals at the kernel (sockets held unread, their drop counters; see the
// generator), the pipe comparison reads every packet for its send timestamp (BENCH_ROOM_SINK=read
// makes the ramps read too).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { types as ms } from 'mediasoup';
import { loadConfig } from '../src/config/index.js';
import { DEFAULT_MEDIA_CODECS } from '../src/relay/engine/codecs.js';
import { WorkerPool } from '../src/relay/engine/pool.js';
import { bench, info, ROOT } from './lib.js';
import type { GeneratorCommand, GeneratorReply, SsrcCount } from './room-capacity-generator.js';

/** The video stream: 30 frames/s of 4 packets of 1,012 B (RTP header + 1,000 B payload): about 0.97 Mbit/s. */
const PACKETS_PER_SECOND = 120;
const PAYLOAD_BYTES = 1000;
const LOSS_LIMIT = 0.01;
const WINDOW_MS = Number(process.env.BENCH_ROOM_WINDOW_MS ?? 10_000);
const MAX_PROBES = Number(process.env.BENCH_ROOM_MAX_PROBES ?? 8);
const START_N = Number(process.env.BENCH_ROOM_START_N ?? 300);
/** The ramps stop probing past this (reporting what they found by then): the 1-worker one at 55 % of it. */
const BUDGET_MS = Number(process.env.BENCH_ROOM_BUDGET_MS ?? 170_000);
/**
 * The pipe comparison: a faster stream (more packets per window, so CPU ticks resolve), paced packet by
 * packet (a frame's burst would queue at the sinks and blur the latencies), and few consumers.
 */
const PIPE_PACKETS_PER_SECOND = 1000;
const PIPE_CONSUMERS_PER_WORKER = 5;
const PIPE_WINDOW_MS = Number(process.env.BENCH_ROOM_PIPE_WINDOW_MS ?? 5_000);
const SINK_SOCKETS = 8;
const COUNTING_SOCKETS = 64;
/** `kernel`: the ramps count at held sockets' drop counters; `read`: the generator reads every packet. */
const SINK_MODE = process.env.BENCH_ROOM_SINK === 'read' ? 'read' : 'kernel';
const RECV_BUFFER_BYTES = 8 * 1024 * 1024; // capped by net.core.rmem_max
const PRODUCER_SSRC = 0x11223344;
const CREATE_BATCH = 100;

/**
 * RTC ports: one consumer is one PlainTransport is one or two ports (RTP, and RTCP apart when counting
 * at the kernel), so this bench needs thousands, far more than its slice of test/support/ports.ts: it
 * takes 46000-60999, above the manual ranges and the test plan, whatever TEST_RTC_PORT_SHIFT says.
 * That lies in Linux's ephemeral range, where another socket may hold a port (or two copies of this
 * bench run at once): the worker then tries the next port.
 */
const ROOM_RTC_PORTS = { min: 46_000, max: 60_999 } as const;
/** At most this many consumers (two ports each, with room for the WebRtcServers, producer and pipe). */
const MAX_N = 5_000;

const started = Date.now();
let pool: WorkerPool;
let generator: ChildProcess;
let senderPort = 0;
let sinkPorts: number[] = [];
let countingPorts: number[] = [];
let rtcpPort = 0;
let holder: ChildProcess | undefined;

// ---------- the load generator (child process) ----------

let snapshotId = 0;
const pendingSnapshots = new Map<number, (reply: Extract<GeneratorReply, { type: 'snapshot' }>) => void>();

function command(c: GeneratorCommand): void {
  generator.send(c);
}

type Snapshot = Extract<GeneratorReply, { type: 'snapshot' }> & { bySsrc: Map<number, SsrcCount> };

function snapshot(): Promise<Snapshot> {
  const id = ++snapshotId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the load generator did not answer a snapshot within 10 s')), 10_000);
    pendingSnapshots.set(id, (reply) => {
      clearTimeout(timer);
      resolve({ ...reply, bySsrc: new Map(reply.counts.map((c) => [c.ssrc, c])) });
    });
    command({ type: 'snapshot', id });
  });
}

async function startGenerator(): Promise<void> {
  const file = `${ROOT}/bench/room-capacity-generator.ts`;
  holder = fork(file, ['hold', String(COUNTING_SOCKETS)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  countingPorts = await new Promise<number[]>((resolve, reject) => {
    holder!.once('exit', (code) => reject(new Error(`the counting sockets' holder exited (${code})`)));
    holder!.once('message', (m: { ports: number[] }) => resolve(m.ports));
  });
  generator = fork(`${ROOT}/bench/room-capacity-generator.ts`, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise<Extract<GeneratorReply, { type: 'ready' }>>((resolve, reject) => {
    generator.once('exit', (code) => reject(new Error(`the load generator exited (${code}) before it was ready`)));
    generator.on('message', (reply: GeneratorReply) => {
      if (reply.type === 'ready') resolve(reply);
      else pendingSnapshots.get(reply.id)?.(reply);
    });
  });
  command({ type: 'start', sinks: SINK_SOCKETS, recvBufferBytes: RECV_BUFFER_BYTES, ssrc: PRODUCER_SSRC, payloadType: 101, payloadBytes: PAYLOAD_BYTES, countingPorts });
  ({ senderPort, sinkPorts, rtcpPort } = await ready);
}

// ---------- the room ----------

interface Room {
  /** One router per worker the room spans; routers[0] holds the producer. */
  routers: ms.Router[];
  producerTransport: ms.PlainTransport;
  producer: ms.Producer;
  /** The router of the i-th consumer. */
  routerFor(i: number): ms.Router;
  close(): void;
}

/**
 * One room with one VP8 producer, over 1 or 2 of the pool's workers. Mirrors the relay's
 * room-over-workers placement (issue 14): one mediasoup router per worker for the room, all with the
 * relay's media codecs; the producer on the first worker's router; a consumer on another worker gets
 * the producer through `pipeToRouter`, done once per worker and reused by every consumer there;
 * consumers spread evenly over the workers. The coordinator can point this at the relay's own code.
 */
async function buildRoom(workers: 1 | 2): Promise<Room> {
  const live = pool.slots.map((slot) => slot.worker!);
  const routers: ms.Router[] = [];
  try {
    for (let i = 0; i < workers; i += 1) routers.push(await live[i]!.createRouter({ mediaCodecs: [...DEFAULT_MEDIA_CODECS] }));
    const producerTransport = await routers[0]!.createPlainTransport({ listenIp: '127.0.0.1', rtcpMux: true, comedia: false });
    await producerTransport.connect({ ip: '127.0.0.1', port: senderPort });
    const producer = await producerTransport.produce({
      kind: 'video',
      rtpParameters: {
        codecs: [{ mimeType: 'video/VP8', payloadType: 101, clockRate: 90000, rtcpFeedback: [] }],
        encodings: [{ ssrc: PRODUCER_SSRC }],
      },
    });
    for (const router of routers.slice(1)) await routers[0]!.pipeToRouter({ producerId: producer.id, router });
    return {
      routers,
      producerTransport,
      producer,
      routerFor: (i) => routers[i % routers.length]!,
      close: () => routers.forEach((r) => r.close()),
    };
  } catch (error) {
    routers.forEach((r) => r.close());
    throw error;
  }
}

interface Leg {
  transport: ms.PlainTransport;
  ssrc: number;
  /** Index of the room's router (0: the producer's worker). */
  worker: number;
}

function consumerCapabilities(router: ms.Router): ms.RtpCapabilities {
  const vp8 = router.rtpCapabilities.codecs!.find((c) => c.mimeType === 'video/VP8')!;
  return { codecs: [{ ...vp8, rtcpFeedback: [] }], headerExtensions: [] };
}

type SinkMode = 'kernel' | 'read';

async function addLeg(room: Room, i: number, mode: SinkMode): Promise<Leg> {
  const router = room.routerFor(i);
  // Counted at the kernel, RTCP (sender reports) gets a port of its own so that only RTP is counted.
  const transport = await router.createPlainTransport({ listenIp: '127.0.0.1', rtcpMux: mode === 'read', comedia: false });
  try {
    if (mode === 'read') await transport.connect({ ip: '127.0.0.1', port: sinkPorts[i % sinkPorts.length]! });
    else await transport.connect({ ip: '127.0.0.1', port: countingPorts[i % countingPorts.length]!, rtcpPort });
    const consumer = await transport.consume({ producerId: room.producer.id, rtpCapabilities: consumerCapabilities(router) });
    return { transport, ssrc: consumer.rtpParameters.encodings![0]!.ssrc!, worker: room.routers.indexOf(router) };
  } catch (error) {
    transport.close();
    throw error;
  }
}

/** Grows or shrinks `legs` to n consumers, the new ones receiving before this returns (or after 5 s). */
async function resize(room: Room, legs: Leg[], n: number, mode: SinkMode): Promise<void> {
  while (legs.length > n) legs.pop()!.transport.close();
  while (legs.length < n) {
    const from = legs.length;
    const batch = Array.from({ length: Math.min(CREATE_BATCH, n - from) }, (_, k) => addLeg(room, from + k, mode));
    legs.push(...(await Promise.all(batch)));
  }
  command({ type: 'keyframe' });
  // Held sockets cannot tell consumers apart: a key frame goes out at once, a second is ample.
  const deadline = Date.now() + (mode === 'read' ? 5_000 : 0);
  if (mode === 'kernel') await sleep(1_000);
  while (Date.now() < deadline) {
    await sleep(250);
    const snap = await snapshot();
    if (legs.every((leg) => (snap.bySsrc.get(leg.ssrc)?.packets ?? 0) > 0)) break;
  }
  await sleep(500);
}

// ---------- measuring ----------

/** Busy and total jiffies of the whole machine, from the first line of /proc/stat. */
function machineJiffies(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

async function workerCpuMs(): Promise<number[]> {
  return Promise.all(
    pool.slots.map(async (slot) => {
      const usage = await slot.worker!.getResourceUsage();
      return usage.ru_utime + usage.ru_stime;
    }),
  );
}

interface Window {
  elapsedMs: number;
  sent: number;
  snap0: Snapshot;
  snap1: Snapshot;
  workerCpuMs: number[];
  generatorCpuMs: number;
  benchCpuMs: number;
  machineBusyPct: number;
  sinkDrops: number;
  counted: number;
  /** Packets the producer's worker took in during the window. */
  producerIn: number;
}

async function producerPackets(producer: ms.Producer): Promise<number> {
  const stats = await producer.getStats();
  return stats.reduce((sum, s) => sum + s.packetCount, 0);
}

async function measure(room: Room, windowMs: number): Promise<Window> {
  const [snap0, cpu0, in0] = await Promise.all([snapshot(), workerCpuMs(), producerPackets(room.producer)]);
  const own0 = process.cpuUsage();
  const m0 = machineJiffies();
  const t0 = performance.now();
  await sleep(windowMs);
  const [snap1, cpu1, in1] = await Promise.all([snapshot(), workerCpuMs(), producerPackets(room.producer)]);
  const elapsedMs = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const m1 = machineJiffies();
  return {
    elapsedMs,
    sent: snap1.sent - snap0.sent,
    snap0,
    snap1,
    workerCpuMs: cpu1.map((c, i) => c - cpu0[i]!),
    generatorCpuMs: (snap1.cpuUs - snap0.cpuUs) / 1000,
    benchCpuMs: (own.user + own.system) / 1000,
    machineBusyPct: ((m1.busy - m0.busy) / (m1.total - m0.total)) * 100,
    sinkDrops: snap1.sinkDrops - snap0.sinkDrops,
    counted: snap1.counted - snap0.counted,
    producerIn: in1 - in0,
  };
}

const received = (w: Window, leg: Leg) => (w.snap1.bySsrc.get(leg.ssrc)?.packets ?? 0) - (w.snap0.bySsrc.get(leg.ssrc)?.packets ?? 0);
const pct = (ms: number, elapsedMs: number) => `${((ms / elapsedMs) * 100).toFixed(0)}%`;

interface Probe {
  n: number;
  loss: number;
  window: Window;
}

async function probe(room: Room, legs: Leg[], n: number): Promise<Probe> {
  await resize(room, legs, n, SINK_MODE);
  const w = await measure(room, WINDOW_MS);
  const got = SINK_MODE === 'kernel' ? w.counted : legs.reduce((sum, leg) => sum + received(w, leg), 0);
  const loss = Math.max(0, 1 - got / (w.sent * n));
  info(
    `N=${String(n).padStart(4)}: loss ${(loss * 100).toFixed(2).padStart(6)}% (${got} of ${n} x ${w.sent}; worker in ${w.producerIn} of ${w.sent}, ` +
      `${SINK_MODE === 'read' ? `sink drops ${w.sinkDrops}` : 'counted at the kernel'}); CPU of one core: workers ${w.workerCpuMs.map((c) => pct(c, w.elapsedMs)).join(' + ')}, ` +
      `generator ${pct(w.generatorCpuMs, w.elapsedMs)}, bench ${pct(w.benchCpuMs, w.elapsedMs)}; machine busy ${w.machineBusyPct.toFixed(0)}% of its cores`,
  );
  return { n, loss, window: w };
}

/** Doubling from `start` until a probe loses ≥ 1 %, then bisecting to within 10 %; at most MAX_PROBES probes. */
async function ramp(workers: 1 | 2, start: number, deadline: number): Promise<{ n: number; probes: Probe[]; capped: boolean }> {
  const room = await buildRoom(workers);
  const legs: Leg[] = [];
  const probes: Probe[] = [];
  let lo = 0;
  let hi = Infinity;
  let n = Math.min(start, MAX_N);
  try {
    command({ type: 'target', port: room.producerTransport.tuple.localPort, packetsPerSecond: PACKETS_PER_SECOND, paced: false });
    while (probes.length < MAX_PROBES && Date.now() < deadline) {
      const p = await probe(room, legs, n);
      probes.push(p);
      if (p.loss < LOSS_LIMIT) lo = n;
      else hi = n;
      if (hi === Infinity) {
        if (n >= MAX_N) break;
        n = Math.min(MAX_N, n * 2);
      } else {
        if (hi - lo <= Math.max(10, lo * 0.1)) break;
        n = Math.round((lo + hi) / 2);
      }
    }
  } finally {
    for (const leg of legs) leg.transport.close();
    room.close();
  }
  return { n: lo, probes, capped: lo >= MAX_N };
}

// ---------- the pipe: latency and CPU against consumers on the producer's own worker ----------

function median(histogram: number[]): number {
  const total = histogram.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (let i = 0; i < histogram.length; i += 1) {
    seen += histogram[i]!;
    if (seen * 2 >= total) return (i + 0.5) * 10;
  }
  return NaN;
}

function latency(w: Window, legs: Leg[]): { meanUs: number; medianUs: number; packets: number } {
  let packets = 0;
  let sum = 0;
  const histogram: number[] = [];
  for (const leg of legs) {
    const a = w.snap0.bySsrc.get(leg.ssrc);
    const b = w.snap1.bySsrc.get(leg.ssrc);
    if (!b) continue;
    packets += b.packets - (a?.packets ?? 0);
    sum += b.latencySumUs - (a?.latencySumUs ?? 0);
    b.histogram?.forEach((count, i) => (histogram[i] = (histogram[i] ?? 0) + count - (a?.histogram?.[i] ?? 0)));
  }
  return { meanUs: sum / packets, medianUs: median(histogram), packets };
}

async function pipeCost(): Promise<{ latencyUs: number; cpuUs: number }> {
  const local = await buildRoom(1);
  const spread = await buildRoom(2);
  const localLegs: Leg[] = [];
  const spreadLegs: Leg[] = [];
  const n = PIPE_CONSUMERS_PER_WORKER * 2;
  const rows: { room: 'local' | 'spread'; cpuUsPerPacket: number; latency: number[] }[] = [];
  try {
    command({ type: 'histograms', on: true });
    // Two rounds of (all on the producer's worker, half across the pipe), the generator feeding one room at a time.
    for (let round = 0; round < 2; round += 1) {
      for (const [name, room, legs] of [
        ['local', local, localLegs],
        ['spread', spread, spreadLegs],
      ] as const) {
        command({ type: 'target', port: room.producerTransport.tuple.localPort, packetsPerSecond: PIPE_PACKETS_PER_SECOND, paced: true });
        await sleep(300);
        await resize(room, legs, n, 'read');
        const w = await measure(room, PIPE_WINDOW_MS);
        const cpuMs = w.workerCpuMs.reduce((a, b) => a + b, 0);
        const groups = [0, 1].map((worker) => latency(w, legs.filter((l) => l.worker === worker)));
        rows.push({ room: name, cpuUsPerPacket: (cpuMs * 1000) / w.sent, latency: groups.map((g) => g.medianUs) });
        info(
          `${name.padEnd(6)} (${name === 'local' ? `${n} consumers on worker 1` : `${n / 2} on worker 1 + ${n / 2} on worker 2 through the pipe`}), ${w.sent} packets at ${PIPE_PACKETS_PER_SECOND}/s: ` +
            `workers' CPU ${cpuMs} ms = ${((cpuMs * 1000) / w.sent).toFixed(1)} µs per packet in; one-way latency median/mean ` +
            groups
              .filter((g) => g.packets > 0)
              .map((g, i) => `worker ${i + 1}: ${g.medianUs.toFixed(0)}/${g.meanUs.toFixed(0)} µs`)
              .join(', ') +
            `; generator ${pct(w.generatorCpuMs, w.elapsedMs)}, machine busy ${w.machineBusyPct.toFixed(0)}%`,
        );
      }
    }
  } finally {
    command({ type: 'histograms', on: false });
    for (const leg of [...localLegs, ...spreadLegs]) leg.transport.close();
    local.close();
    spread.close();
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const spreadRows = rows.filter((r) => r.room === 'spread');
  const localRows = rows.filter((r) => r.room === 'local');
  return {
    // Same window, same sinks: consumers behind the pipe against those on the producer's worker.
    latencyUs: avg(spreadRows.map((r) => r.latency[1]! - r.latency[0]!)),
    // Same number of consumers; the spread room adds the pipe consumer's send and the piped producer's receive.
    cpuUs: avg(spreadRows.map((r) => r.cpuUsPerPacket)) - avg(localRows.map((r) => r.cpuUsPerPacket)),
  };
}

// ---------- main ----------

export async function roomCapacity(): Promise<void> {
  const config = loadConfig({
    MEDIASOUP_WORKERS: '2',
    RTC_MIN_PORT: String(ROOM_RTC_PORTS.min),
    RTC_MAX_PORT: String(ROOM_RTC_PORTS.max),
    MEDIASOUP_LISTEN_IP: '127.0.0.1',
    MEDIASOUP_LOG_LEVEL: 'error',
  }).media;
  console.log(
    `room-capacity: one VP8-like producer at ${PACKETS_PER_SECOND} packets/s (30 frames/s, ${PAYLOAD_BYTES + 12} B packets, ` +
      `~${((PACKETS_PER_SECOND * (PAYLOAD_BYTES + 12) * 8) / 1e6).toFixed(2)} Mbit/s) over PlainTransports on loopback; ` +
      `the largest N with < ${LOSS_LIMIT * 100}% loss over ${WINDOW_MS / 1000} s, counted ${SINK_MODE === 'kernel' ? 'at the kernel (held sockets)' : 'by reading every packet'}; RTC ports ${ROOM_RTC_PORTS.min}-${ROOM_RTC_PORTS.max}`,
  );
  const stop = () => {
    pool?.close();
    generator?.kill('SIGKILL');
    holder?.kill('SIGKILL');
    process.exit(1);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await startGenerator();
  try {
    pool = await WorkerPool.start(config, pino({ level: 'silent' }));
    console.log('  1 worker: one router');
    const one = await ramp(1, START_N, started + BUDGET_MS * 0.55);
    console.log('  2 workers: a router on each, the producer piped from worker 1 to worker 2, consumers alternating');
    const two = await ramp(2, Math.max(START_N, 2 * one.n), started + BUDGET_MS); // first probe: twice the 1-worker figure
    console.log('  pipe cost');
    const pipe = await pipeCost();

    const generatorPct = (r: typeof one) => {
      const best = r.probes.find((p) => p.n === r.n);
      return best ? `${pct(best.window.generatorCpuMs, best.window.elapsedMs)} of one core` : 'n/a';
    };
    // What a forwarded packet costs the workers at the figure: the load-independent part, for sizing.
    const usPerForwarded = (r: typeof one) => {
      const best = r.probes.find((p) => p.n === r.n);
      if (!best) return NaN;
      const cpuMs = best.window.workerCpuMs.reduce((a, b) => a + b, 0);
      return (cpuMs * 1000) / (best.n * best.window.sent * (1 - best.loss));
    };
    info(
      `workers' CPU per forwarded packet at the figures: ${usPerForwarded(one).toFixed(1)} µs (1 worker), ${usPerForwarded(two).toFixed(1)} µs (2 workers, pipe included); ` +
        `one whole core at that cost: ~${Math.round(1e6 / usPerForwarded(one) / PACKETS_PER_SECOND)} consumers of this stream`,
    );
    info(`load generator at the figures: ${generatorPct(one)} (1 worker, N=${one.n}), ${generatorPct(two)} (2 workers, N=${two.n})${one.capped || two.capped ? `; capped at ${MAX_N} consumers (ports)` : ''}`);
    bench('room-capacity-1-worker', one.n, 'consumers');
    bench('room-capacity-2-workers', two.n, 'consumers');
    bench('room-capacity-scaling', one.n > 0 ? two.n / one.n : 0, 'x');
    bench('room-worker-us-per-forwarded-packet', usPerForwarded(one), 'µs');
    bench('pipe-extra-us-per-packet', pipe.latencyUs, 'µs'); // one-way latency
    bench('pipe-extra-cpu-us-per-packet', pipe.cpuUs, 'µs'); // the workers' CPU
  } finally {
    pool?.close();
    if (generator.connected) command({ type: 'stop' });
    const exited = new Promise<void>((resolve) => (generator.exitCode !== null ? resolve() : generator.once('exit', () => resolve())));
    const timer = setTimeout(() => generator.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
    holder?.kill('SIGKILL');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await roomCapacity();
}
