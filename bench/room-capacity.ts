// room-capacity: how many consumers of one VP8 producer one room holds with under 1 % loss, on one
// mediasoup worker and spread over two (the relay's rooms over workers: one router per worker with the
// same codecs, the producer piped once to the second). Also the CPU a pipe adds per packet.
//
// To keep the load generator cheap (the machine has 2 cores and the workers need them), media is fed
// and drained with mediasoup PlainTransports made directly on the routers (plain RTP, no SRTP/ICE):
// one Node UDP socket sends the producer's packets; consumers send to a closed loopback port, and what
// each worker forwarded is read from its transports' rtpBytesSent. Loss = 1 - bytes forwarded /
// (N × bytes fed) over the window: a worker that cannot keep up drops at its input socket.
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import * as mediasoup from 'mediasoup';
import type { types as ms } from 'mediasoup';
import { DEFAULT_MEDIA_CODECS, type RouterMediaCodec } from '../src/media/engine/codecs.js';
import { benchRtcPorts } from '../test/support/ports.js';
import { vp8Packet } from '../test/support/webrtc/rtp.js';
import { bench, cpuMs, freePort, info } from './lib.js';

const PACKETS_PER_SECOND = Number(process.env.BENCH_ROOM_PPS ?? 200);
const PAYLOAD_FILLER = 1000; // ~1 kB video packets: 200 packets/s ≈ 1.6 Mbit/s, a 720p camera
const WINDOW_MS = Number(process.env.BENCH_ROOM_WINDOW_MS ?? 10_000);
const MAX_PROBES = Number(process.env.BENCH_ROOM_PROBES ?? 6);
const START_N = 200;
const MAX_N = 12_800;
const DRAINS_PER_WORKER = 4;
const LOSS_LIMIT = 0.01;
const SSRC = 0x1234_5678;

interface Room {
  workers: ms.Worker[];
  routers: ms.Router[];
  feed: ms.PlainTransport;
  producer: ms.Producer;
  close(): void;
}

async function openRoom(workerCount: number): Promise<Room> {
  const ports = benchRtcPorts();
  const workers: ms.Worker[] = [];
  for (let i = 0; i < workerCount; i++) workers.push(await mediasoup.createWorker({ logLevel: 'error', rtcMinPort: ports.min, rtcMaxPort: ports.max }));
  const routers: ms.Router[] = [];
  for (const worker of workers) routers.push(await worker.createRouter({ mediaCodecs: structuredClone(DEFAULT_MEDIA_CODECS) as RouterMediaCodec[] }));
  const feed = await routers[0]!.createPlainTransport({ listenIp: '127.0.0.1', rtcpMux: true, comedia: true });
  const producer = await feed.produce({
    kind: 'video',
    rtpParameters: { codecs: [{ mimeType: 'video/VP8', payloadType: 101, clockRate: 90000, rtcpFeedback: [] }], encodings: [{ ssrc: SSRC }] },
  });
  // The relay's pipe between two parts of a room: once, kept for every consumer on the other worker.
  for (const router of routers.slice(1)) await routers[0]!.pipeToRouter({ producerId: producer.id, router });
  return {
    workers,
    routers,
    feed,
    producer,
    close: () => {
      for (const worker of workers) worker.close();
    },
  };
}

/** The load generator: one socket sending the producer's packets at PACKETS_PER_SECOND, a keyframe every 250 ms. */
function startFeed(port: number) {
  const socket = dgram.createSocket('udp4');
  let index = 0;
  let seq = 1;
  let ts = 1000;
  let picture = 1;
  const sent = { packets: 0, bytes: 0 };
  const perTick = PACKETS_PER_SECOND / 100;
  let owed = 0;
  const timer = setInterval(() => {
    owed += perTick;
    for (; owed >= 1; owed -= 1) {
      const packet = vp8Packet(index, seq, ts, picture, index % Math.max(1, PACKETS_PER_SECOND / 4) === 0, PAYLOAD_FILLER);
      packet.header.ssrc = SSRC;
      packet.header.payloadType = 101;
      const buffer = packet.serialize();
      socket.send(buffer, port, '127.0.0.1');
      sent.packets += 1;
      sent.bytes += buffer.length;
      index += 1;
      seq = (seq + 1) & 0xffff;
      ts = (ts + 450) >>> 0;
      picture = (picture + 1) & 0x7fff;
    }
  }, 10);
  return {
    sent,
    stop: () => {
      clearInterval(timer);
      socket.close();
    },
  };
}

interface Probe {
  n: number;
  loss: number;
  workerCpuPct: number[];
  generatorCpuPct: number;
}

/** N consumers on plain transports, split evenly over the room's routers; one window of forwarding. */
async function probe(room: Room, feed: ReturnType<typeof startFeed>, sink: number, n: number, onRouters: number[] = room.routers.map((_, i) => i)): Promise<Probe> {
  const drains: ms.PlainTransport[] = [];
  const rtpCapabilities = { codecs: room.routers[0]!.rtpCapabilities.codecs!.filter((c) => c.mimeType === 'video/VP8'), headerExtensions: [] };
  try {
    const perRouter = onRouters.map((_, i) => Math.floor(n / onRouters.length) + (i < n % onRouters.length ? 1 : 0));
    for (const [i, routerIndex] of onRouters.entries()) {
      const router = room.routers[routerIndex]!;
      const own: ms.PlainTransport[] = [];
      for (let d = 0; d < DRAINS_PER_WORKER; d++) {
        const drain = await router.createPlainTransport({ listenIp: '127.0.0.1', rtcpMux: true, comedia: false });
        await drain.connect({ ip: '127.0.0.1', port: sink });
        own.push(drain);
      }
      drains.push(...own);
      const creations: Promise<unknown>[] = [];
      for (let c = 0; c < perRouter[i]!; c++) creations.push(own[c % own.length]!.consume({ producerId: room.producer.id, rtpCapabilities }));
      await Promise.all(creations);
    }
    await sleep(1500); // a keyframe reaches every consumer
    const bytesSent = async () => (await Promise.all(drains.map((d) => d.getStats()))).reduce((sum, [s]) => sum + (s?.rtpBytesSent ?? 0), 0);
    const cpu0 = room.workers.map((w) => cpuMs(w.pid));
    const own0 = process.cpuUsage();
    const fed0 = feed.sent.bytes;
    const out0 = await bytesSent();
    const t0 = performance.now();
    await sleep(WINDOW_MS);
    const out1 = await bytesSent();
    const fed = feed.sent.bytes - fed0;
    const elapsed = performance.now() - t0;
    const own = process.cpuUsage(own0);
    const loss = Math.max(0, 1 - (out1 - out0) / (n * fed));
    return {
      n,
      loss,
      workerCpuPct: room.workers.map((w, i) => ((cpuMs(w.pid) - cpu0[i]!) / elapsed) * 100),
      generatorCpuPct: ((own.user + own.system) / 1000 / elapsed) * 100,
    };
  } finally {
    for (const drain of drains) drain.close();
  }
}

/** The largest N under LOSS_LIMIT: doubling from START_N, then bisecting, at most MAX_PROBES windows. */
async function capacity(workerCount: number): Promise<{ n: number; probes: Probe[] }> {
  const room = await openRoom(workerCount);
  const sink = await freePort();
  const feed = startFeed(room.feed.tuple.localPort);
  const probes: Probe[] = [];
  try {
    await sleep(500);
    let pass = 0;
    let fail = 0;
    let n = START_N;
    while (probes.length < MAX_PROBES) {
      const result = await probe(room, feed, sink, n);
      probes.push(result);
      info(
        `${workerCount} worker(s), N=${String(n).padStart(5)}: loss ${(result.loss * 100).toFixed(2)}%, worker CPU ${result.workerCpuPct.map((c) => `${c.toFixed(0)}%`).join(' + ')}, generator CPU ${result.generatorCpuPct.toFixed(0)}%`,
      );
      if (result.loss < LOSS_LIMIT) pass = n;
      else fail = n;
      if (fail === 0) {
        if (n >= MAX_N) break;
        n *= 2;
      } else {
        if (fail - pass <= Math.max(50, pass / 16)) break;
        n = Math.round((pass + fail) / 2);
      }
    }
    return { n: pass, probes };
  } finally {
    feed.stop();
    room.close();
  }
}

/** Worker CPU per forwarded packet with M consumers on the producer's worker, then with M behind a pipe. */
async function pipeExtra(): Promise<number> {
  const m = 100;
  const room = await openRoom(2);
  const sink = await freePort();
  const feed = startFeed(room.feed.tuple.localPort);
  try {
    await sleep(500);
    const local = await probe(room, feed, sink, m, [0]);
    const piped = await probe(room, feed, sink, m, [1]);
    const packets = PACKETS_PER_SECOND * m; // forwarded per second in both cases
    const cpuPerPacketUs = (p: Probe) => (p.workerCpuPct.reduce((a, b) => a + b, 0) / 100 / packets) * 1e6;
    info(`pipe: ${m} consumers on the producer's worker ${cpuPerPacketUs(local).toFixed(2)} µs CPU per forwarded packet, behind a pipe ${cpuPerPacketUs(piped).toFixed(2)} µs`);
    // The pipe's cost is paid once per packet of the stream, whatever M: per piped packet.
    return ((cpuPerPacketUs(piped) - cpuPerPacketUs(local)) * packets) / PACKETS_PER_SECOND;
  } finally {
    feed.stop();
    room.close();
  }
}

export async function roomCapacity(): Promise<void> {
  info(`room-capacity: one VP8 producer at ${PACKETS_PER_SECOND} packets/s (~${PAYLOAD_FILLER} B), consumers on PlainTransports, ${WINDOW_MS / 1000} s windows, loss limit ${LOSS_LIMIT * 100}%`);
  const one = await capacity(1);
  const two = await capacity(2);
  const generator = Math.max(...[...one.probes, ...two.probes].map((p) => p.generatorCpuPct));
  bench('room-capacity-1-worker', one.n, 'consumers');
  bench('room-capacity-2-workers', two.n, 'consumers');
  bench('room-capacity-scaling', one.n === 0 ? 0 : two.n / one.n, 'ratio');
  bench('room-capacity-generator-cpu-pct', generator, '% of one core (highest window)');
  if (process.env.BENCH_ROOM_PIPE !== '0') bench('pipe-extra-us-per-packet', await pipeExtra(), 'µs CPU per piped packet');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await roomCapacity();
}
