// cluster-pipe: what a pipe between two relay nodes (issue 40, a room that spans nodes) adds to a
// packet, on loopback, beside room-capacity's pipe between two workers of one relay. Two nodes share a
// Redis (database 13 of the machine's, BENCH_CLUSTER_REDIS_URL to change it); A takes at most 2
// consumers (CLUSTER_NODE_MAX_CONSUMERS), so a room made on A takes two receivers' transports on A and
// the third on B, where A's producer is piped once. An opus-sized packet every 1 ms from this process
// into A's plain transport, its send time in the payload:
// - one-way latency: the receiver on B against a receiver on A in the same window (medians, difference);
// - CPU: the two nodes' workers with the receiver on B consuming (A's pipe consumer sends, B's copy
//   receives) against the same number of receivers all on A (B's consumer closed: its copy and the pipe
//   go), per packet sent.
import dgram from 'node:dgram';
import { Redis } from 'ioredis';
import { bench, BENCH_TOKEN, freePort, httpClient, info, median, startServer, stopThenRethrow, type HttpClient, type ServerProcess } from './lib.js';

const REDIS_URL = process.env.BENCH_CLUSTER_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
const WINDOW_MS = Number(process.env.BENCH_CLUSTER_PIPE_WINDOW_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_CLUSTER_PIPE_ROUNDS ?? 3);
const PACKETS_PER_SECOND = 1000;
const SSRC = 33_333;
const OPUS = { kind: 'audio', rtpParameters: { codecs: [{ mimeType: 'audio/opus', payloadType: 111, clockRate: 48000, channels: 2 }], encodings: [{ ssrc: SSRC }] } };
const PIN = { 'x-cluster-forwarded-by': 'bench' };

async function node(id: string, maxConsumers: number): Promise<ServerProcess> {
  const port = await freePort();
  return startServer(
    { MEDIASOUP_WORKERS: '1', REDIS_URL, CLUSTER_NODE_ID: id, CLUSTER_NODE_URL: `http://127.0.0.1:${port}`, CLUSTER_NODE_MAX_CONSUMERS: String(maxConsumers), MEDIASOUP_PIPE_LISTEN_IP: '127.0.0.1' },
    { port },
  );
}

/** The workers' CPU time of a node (ms), from its metrics. */
async function workerCpuMs(client: HttpClient): Promise<number> {
  const text = String((await client.request('GET', '/internal/metrics')).body);
  return text
    .split('\n')
    .filter((line) => line.startsWith('media_worker_cpu_seconds{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)) * 1000, 0);
}

/** A UDP socket that records each RTP packet's one-way latency (µs) from the send time in its payload. */
async function sink(): Promise<{ socket: dgram.Socket; latencies: number[] }> {
  const socket = dgram.createSocket('udp4');
  const latencies: number[] = [];
  socket.on('message', (message) => {
    // RTP (a consumer rewrites the SSRC and adds header extensions), not RTCP.
    const type = message[1]! & 0x7f;
    if (message.length < 20 || (type >= 72 && type <= 76)) return;
    // The payload after the header, its CSRCs and the extensions a consumer adds.
    let at = 12 + 4 * (message[0]! & 0x0f);
    if (message[0]! & 0x10) at += 4 + 4 * message.readUInt16BE(at + 2);
    if (message.length < at + 8) return;
    latencies.push(Number(process.hrtime.bigint() / 1000n - message.readBigUInt64BE(at)));
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, latencies };
}

function packet(seq: number): Buffer {
  const out = Buffer.alloc(12 + 8 + 92);
  out[0] = 0x80;
  out[1] = 111;
  out.writeUInt16BE(seq & 0xffff, 2);
  out.writeUInt32BE((seq * 48) >>> 0, 4);
  out.writeUInt32BE(SSRC, 8);
  out.writeBigUInt64BE(process.hrtime.bigint() / 1000n, 12);
  return out;
}

/** Sends for `ms` at PACKETS_PER_SECOND (in 10-ms bursts of 10); returns how many. */
async function send(socket: dgram.Socket, port: number, ip: string, ms: number, from: number): Promise<number> {
  let seq = from;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < PACKETS_PER_SECOND / 100; i++) socket.send(packet(seq++), port, ip);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return seq - from;
}

export async function clusterPipe(): Promise<void> {
  console.log(`cluster-pipe: two relay nodes on loopback sharing ${REDIS_URL}; ${PACKETS_PER_SECOND} packets/s of 112 B, ${ROUNDS} rounds of two ${WINDOW_MS / 1000}-s windows`);
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const stale = await redis.keys('cluster:*');
  if (stale.length > 0) await redis.del(...stale);
  redis.disconnect();
  const a = await node('pipe-a', 2);
  const b = await node('pipe-b', 1000).catch(stopThenRethrow(a));
  const sender = dgram.createSocket('udp4');
  const sinks = await Promise.all([sink(), sink(), sink()]);
  try {
    const viaA = httpClient(a.url, { 'x-internal-token': BENCH_TOKEN });
    const viaB = httpClient(b.url, { 'x-internal-token': BENCH_TOKEN });
    const deadline = Date.now() + 10_000;
    while ((await viaA.request('GET', '/internal/v1/cluster')).body.nodes.length < 2) {
      if (Date.now() > deadline) throw new Error('the two nodes never saw each other');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const room = (await viaA.request('POST', '/internal/v1/routers', {}, PIN)).body;
    const plain = async (comedia: boolean) => (await viaA.request('POST', '/internal/v1/plain-transports', { routerId: room.id, comedia })).body as { id: string; ip: string; port: number };
    const input = await plain(true);
    await viaA.request('POST', '/internal/v1/producers', { transportId: input.id, ...OPUS });
    const producerId = (await viaA.request('GET', `/internal/v1/routers/${room.id}`)).body.plainTransports[0].producers[0].id as string;
    // Two receivers' transports while A carries no consumer (both on A), then the third once A carries two (on B).
    const outputs = [await plain(false), await plain(false)];
    const consume = async (transport: { id: string }, i: number) => {
      await viaA.request('POST', `/internal/v1/plain-transports/${transport.id}/connect`, { ip: '127.0.0.1', port: sinks[i]!.socket.address().port });
      const consumer = (await viaA.request('POST', '/internal/v1/consumers', { transportId: transport.id, producerId, rtpCapabilities: room.rtpCapabilities })).body as { id: string };
      await viaA.request('POST', `/internal/v1/consumers/${consumer.id}/resume`);
      return consumer.id;
    };
    const localIds = [await consume(outputs[0]!, 0), await consume(outputs[1]!, 1)];
    const remote = await plain(false);
    if ((await viaB.request('GET', `/internal/v1/cluster/resources/${remote.id}`, undefined, PIN)).status !== 200) throw new Error('the third receiver was not placed on B');
    let seq = 0;
    const latencyRows: number[] = [];
    const cpuRows: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Window 1: one receiver on A and one on B (the second on A closed).
      await viaA.request('DELETE', `/internal/v1/consumers/${localIds[1]}`);
      const remoteId = await consume(remote, 2);
      seq += await send(sender, input.port, input.ip, 500, seq); // warm-up: the copy on B up
      for (const one of sinks) one.latencies.length = 0;
      let cpu0 = (await workerCpuMs(viaA)) + (await workerCpuMs(viaB));
      let sent = await send(sender, input.port, input.ip, WINDOW_MS, seq);
      seq += sent;
      const spanCpu = ((await workerCpuMs(viaA)) + (await workerCpuMs(viaB)) - cpu0) / sent;
      const [local, piped] = [median(sinks[0].latencies), median(sinks[2].latencies)];
      info(`round ${round + 1}: one receiver on A, one on B: ${sent} packets, one-way median ${local.toFixed(0)} µs on A (${sinks[0].latencies.length} received), ${piped.toFixed(0)} µs on B (${sinks[2].latencies.length}); workers ${(spanCpu * 1000).toFixed(1)} µs per packet`);
      // Window 2: both receivers on A (B's consumer closed: its copy and the pipe go).
      await viaA.request('DELETE', `/internal/v1/consumers/${remoteId}`);
      localIds[1] = await consume(outputs[1]!, 1);
      seq += await send(sender, input.port, input.ip, 500, seq);
      cpu0 = (await workerCpuMs(viaA)) + (await workerCpuMs(viaB));
      sent = await send(sender, input.port, input.ip, WINDOW_MS, seq);
      seq += sent;
      const localCpu = ((await workerCpuMs(viaA)) + (await workerCpuMs(viaB)) - cpu0) / sent;
      info(`round ${round + 1}: both receivers on A: ${sent} packets; workers ${(localCpu * 1000).toFixed(1)} µs per packet`);
      latencyRows.push(piped - local);
      cpuRows.push((spanCpu - localCpu) * 1000);
    }
    info(`extra one-way latency per round: ${latencyRows.map((x) => x.toFixed(0)).join(', ')} µs; extra CPU per packet: ${cpuRows.map((x) => x.toFixed(1)).join(', ')} µs`);
    bench('cluster-pipe-extra-us-per-packet', median(latencyRows), 'µs');
    bench('cluster-pipe-extra-cpu-us-per-packet', median(cpuRows), 'µs');
    await viaA.request('DELETE', `/internal/v1/routers/${room.id}`);
  } finally {
    sender.close();
    for (const one of sinks) one.socket.close();
    await Promise.all([a.stop(), b.stop()]);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await clusterPipe();
}
