// media-fanout: one VP8 producer sent by a werift peer into the real server, N = 1, 10, 50 consumers
// on werift peers; forwarded packets/s counted at the receivers and the mediasoup worker's CPU time
// (utime + stime from /proc/<pid>/stat) per forwarded packet.
import { setTimeout as sleep } from 'node:timers/promises';
import { RecvPeer, SendPeer, OPUS, VP8 } from '../test/support/webrtc/peer.js';
import { receiverRtpCapabilities, type ConsumerDescription } from '../test/support/webrtc/sdp.js';
import { waitFor } from '../test/support/webrtc/wait.js';
import { bench, BENCH_TOKEN, cpuMs, httpClient, info, startServer, type HttpClient } from './lib.js';

const FANOUTS = [1, 10, 50];
const CONSUMERS_PER_PEER = 10;
const PACKETS_PER_SECOND = Number(process.env.BENCH_FANOUT_PPS ?? 200);
const VIDEO_PAYLOAD_BYTES = 1000; // a typical full video packet
const WINDOW_MS = Number(process.env.BENCH_FANOUT_WINDOW_MS ?? 5000);

async function call<T = any>(client: HttpClient, method: string, path: string, wanted: number, body?: unknown): Promise<T> {
  const res = await client.request<T>(method, path, body);
  if (res.status !== wanted) throw new Error(`${method} ${path}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function mediaFanout(): Promise<void> {
  console.log(`media-fanout: one VP8 producer at ${PACKETS_PER_SECOND} packets/s (~${VIDEO_PAYLOAD_BYTES} B), one mediasoup worker, werift peers on loopback`);
  const server = await startServer({ MEDIASOUP_WORKERS: '1' });
  const client = httpClient(server.url, { 'x-internal-token': BENCH_TOKEN });
  const peers: { close(): Promise<void> }[] = [];
  let sender: SendPeer | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const workerPid = (await call(client, 'GET', '/internal/info', 200)).workers[0].pid as number;
    const router = await call(client, 'POST', '/internal/v1/routers', 201, {});
    const sendTransport = await call(client, 'POST', '/internal/v1/transports', 201, { routerId: router.id, direction: 'send' });
    sender = await SendPeer.create(sendTransport, { videoFillerBytes: VIDEO_PAYLOAD_BYTES - 11 });
    peers.push(sender);
    await call(client, 'POST', `/internal/v1/transports/${sendTransport.id}/connect`, 200, { dtlsParameters: sender.dtlsParameters });
    await sender.connected();
    const producer = await call(client, 'POST', '/internal/v1/producers', 201, {
      transportId: sendTransport.id,
      kind: 'video',
      rtpParameters: sender.rtpParameters.video,
    });
    const rtpCapabilities = receiverRtpCapabilities(router.rtpCapabilities, [OPUS, VP8]);

    // Packets go out in 10 ms ticks, so the rate holds above what a 1 ms timer could do alone.
    const perTick = PACKETS_PER_SECOND / 100;
    let owed = 0;
    const s = sender;
    timer = setInterval(() => {
      owed += perTick;
      for (; owed >= 1; owed -= 1) s.sendVideo();
    }, 10);

    const results: { n: number; pps: number; usPerPacket: number }[] = [];
    for (const n of FANOUTS) {
      const receivers: RecvPeer[] = [];
      const consumerIds: string[] = [];
      for (let start = 0; start < n; start += CONSUMERS_PER_PEER) {
        const count = Math.min(CONSUMERS_PER_PEER, n - start);
        const transport = await call(client, 'POST', '/internal/v1/transports', 201, { routerId: router.id, direction: 'recv' });
        const consumers: ConsumerDescription[] = [];
        for (let i = 0; i < count; i += 1) {
          consumers.push(await call(client, 'POST', '/internal/v1/consumers', 201, { transportId: transport.id, producerId: producer.id, rtpCapabilities }));
        }
        const peer = await RecvPeer.create(transport, consumers);
        peers.push(peer);
        receivers.push(peer);
        await call(client, 'POST', `/internal/v1/transports/${transport.id}/connect`, 200, { dtlsParameters: peer.dtlsParameters });
        consumerIds.push(...consumers.map((c) => c.id));
      }
      await Promise.all(receivers.map((r) => r.connected(20_000)));
      await Promise.all(consumerIds.map((id) => call(client, 'POST', `/internal/v1/consumers/${id}/resume`, 200)));
      const total = () => receivers.reduce((sum, r) => sum + [...r.received.values()].reduce((a, l) => a + l.length, 0), 0);
      await waitFor(() => receivers.every((r) => [...r.received.values()].every((l) => l.length > 0)), { timeoutMs: 10_000, what: `every one of ${n} consumers receiving` });
      await sleep(500);

      const cpu0 = cpuMs(workerPid);
      const sent0 = s.sent.video;
      const got0 = total();
      const own0 = process.cpuUsage();
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      const cpu1 = cpuMs(workerPid);
      const got1 = total();
      const sent = s.sent.video - sent0;
      const own = process.cpuUsage(own0);
      const elapsed = performance.now() - t0;
      const forwarded = got1 - got0;
      const pps = (forwarded * 1000) / elapsed;
      const usPerPacket = ((cpu1 - cpu0) * 1000) / forwarded;
      info(
        `N=${String(n).padStart(2)}: forwarded ${pps.toFixed(0).padStart(6)} packets/s (${((forwarded / (n * sent)) * 100).toFixed(1)}% of ${n} x ${sent} sent), ` +
          `worker CPU ${(cpu1 - cpu0).toFixed(0)} ms in ${(elapsed / 1000).toFixed(1)} s = ${usPerPacket.toFixed(1)} ms per 1000 packets; ` +
          `bench process CPU ${(((own.user + own.system) / 1000 / elapsed) * 100).toFixed(0)}%`,
      );
      results.push({ n, pps, usPerPacket });

      await Promise.all(consumerIds.map((id) => call(client, 'DELETE', `/internal/v1/consumers/${id}`, 204)));
      for (const r of receivers) await r.close();
    }
    for (const r of results) bench(`fanout-n${r.n}-packets-per-s`, r.pps, 'packets/s');
    for (const r of results) bench(`fanout-n${r.n}-worker-cpu-ms-per-1000`, r.usPerPacket, 'ms');
    bench('fanout-us-per-packet', results[results.length - 1]!.usPerPacket, 'µs');
  } finally {
    if (timer) clearInterval(timer);
    for (const p of peers) await p.close().catch(() => {});
    client.close();
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await mediaFanout();
}
