// whip: how long a publisher takes from its first request to its first RTP packet at the relay, by WHIP
// (one POST of the offer) beside the REST API's three calls (transport, connect, produce), each with a
// werift peer sending VP8 on loopback (median and p95 of BENCH_WHIP_RUNS); and WHIP sessions set up
// per second on one worker (POST then DELETE, BENCH_WHIP_CONCURRENCY at a time, the offer made once).
// "First RTP" is the first poll (every 5 ms) of the video producer's stats with a packet counted.
import { setTimeout as sleep } from 'node:timers/promises';
import { RTCPeerConnection, RTCRtpCodecParameters, RTCRtpHeaderExtensionParameters, type RTCRtpTransceiver } from 'werift';
import { SendPeer } from '../test/support/webrtc/peer.js';
import { vp8Packet } from '../test/support/webrtc/rtp.js';
import { bench, BENCH_TOKEN, httpClient, info, median, percentile, startServer, type HttpClient } from './lib.js';

const RUNS = Number(process.env.BENCH_WHIP_RUNS ?? 20);
const WINDOW_MS = Number(process.env.BENCH_WHIP_WINDOW_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_WHIP_CONCURRENCY ?? 4);
const POLL_MS = 5;

/** The server's origin (its public and internal routes share the one listener here). */
let base = '';

async function call<T = any>(client: HttpClient, method: string, path: string, wanted: number, body?: unknown): Promise<T> {
  const res = await client.request<T>(method, path, body);
  if (res.status !== wanted) throw new Error(`${method} ${path}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A werift publisher of VP8 alone (sendonly), its offer made. */
async function publisher(): Promise<{ pc: RTCPeerConnection; video: RTCRtpTransceiver; sdp: string }> {
  const pc = new RTCPeerConnection({
    iceServers: [],
    bundlePolicy: 'max-bundle',
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceFilterCandidatePair: (pair) => pair.localCandidate.host === '127.0.0.1',
    codecs: { video: [new RTCRtpCodecParameters({ mimeType: 'video/VP8', clockRate: 90000, payloadType: 96, rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }] })] },
    headerExtensions: { video: [new RTCRtpHeaderExtensionParameters({ id: 1, uri: 'urn:ietf:params:rtp-hdrext:sdes:mid' })] },
  });
  const video = pc.addTransceiver('video', { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  return { pc, video, sdp: pc.localDescription!.sdp };
}

/** Sends VP8 every 10 ms until stopped (a keyframe first). */
function sendEvery10ms(send: (index: number) => void): () => void {
  let index = 0;
  const timer = setInterval(() => send(index++), 10);
  return () => clearInterval(timer);
}

/** Milliseconds from `t0` until the producer's stats count a packet. */
async function firstRtp(client: HttpClient, producerId: string, t0: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const stats = await call<{ packetCount?: number }[]>(client, 'GET', `/internal/v1/producers/${producerId}/stats`, 200);
    if ((stats[0]?.packetCount ?? 0) > 0) return performance.now() - t0;
    await sleep(POLL_MS);
  }
  throw new Error(`no RTP at producer ${producerId} within 10 s`);
}

async function whipOnce(client: HttpClient, routerId: string): Promise<number> {
  const endpoint = await call<{ id: string; url: string; token: string }>(client, 'POST', '/internal/v1/whip-endpoints', 201, { routerId });
  const { pc, video, sdp } = await publisher();
  let stop = () => {};
  try {
    const t0 = performance.now();
    const res = await fetch(`${base}/whip/${endpoint.id}`, { method: 'POST', headers: { Authorization: `Bearer ${endpoint.token}`, 'Content-Type': 'application/sdp' }, body: sdp });
    const answer = await res.text();
    if (res.status !== 201) throw new Error(`POST /whip: HTTP ${res.status}: ${answer}`);
    await pc.setRemoteDescription({ type: 'answer', sdp: answer });
    stop = sendEvery10ms((i) => void video.sender.sendRtp(vp8Packet(i, i & 0xffff, i * 900, i & 0x7fff, i % 30 === 0)).catch(() => {}));
    const state = await call<{ transports: { producers: { id: string }[] }[] }>(client, 'GET', `/internal/v1/routers/${routerId}`, 200);
    return await firstRtp(client, state.transports.at(-1)!.producers[0]!.id, t0);
  } finally {
    stop();
    await pc.close();
    await call(client, 'DELETE', `/internal/v1/whip-endpoints/${endpoint.id}`, 204);
  }
}

async function restOnce(client: HttpClient, routerId: string): Promise<number> {
  const t0 = performance.now();
  const transport = await call(client, 'POST', '/internal/v1/transports', 201, { routerId, direction: 'send' });
  const peer = await SendPeer.create(transport);
  let stop = () => {};
  try {
    await call(client, 'POST', `/internal/v1/transports/${transport.id}/connect`, 200, { dtlsParameters: peer.dtlsParameters });
    const producer = await call<{ id: string }>(client, 'POST', '/internal/v1/producers', 201, { transportId: transport.id, kind: 'video', rtpParameters: peer.rtpParameters.video });
    stop = sendEvery10ms(() => peer.sendVideo());
    return await firstRtp(client, producer.id, t0);
  } finally {
    stop();
    await peer.close();
    await call(client, 'DELETE', `/internal/v1/transports/${transport.id}`, 204);
  }
}

/** WHIP sessions set up (POST answered 201, then DELETE) per second, CONCURRENCY endpoints at a time. */
async function sessionsPerSecond(client: HttpClient, routerId: string): Promise<number> {
  const { pc, sdp } = await publisher();
  await pc.close();
  let done = 0;
  const until = performance.now() + WINDOW_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const endpoint = await call<{ id: string; token: string }>(client, 'POST', '/internal/v1/whip-endpoints', 201, { routerId });
      const auth = { Authorization: `Bearer ${endpoint.token}` };
      while (performance.now() < until) {
        const res = await fetch(`${base}/whip/${endpoint.id}`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/sdp' }, body: sdp });
        await res.text();
        if (res.status !== 201) throw new Error(`POST /whip: HTTP ${res.status}`);
        done += 1;
        const ended = await fetch(`${base}${res.headers.get('location')!}`, { method: 'DELETE', headers: auth });
        if (ended.status !== 200) throw new Error(`DELETE session: HTTP ${ended.status}`);
      }
      await call(client, 'DELETE', `/internal/v1/whip-endpoints/${endpoint.id}`, 204);
    }),
  );
  return (done * 1000) / (performance.now() - t0);
}

export async function whip(): Promise<void> {
  console.log(`whip: ${RUNS} publishers by WHIP and by the REST API (werift, VP8, loopback, first RTP polled every ${POLL_MS} ms); sessions/s over ${WINDOW_MS} ms at ${CONCURRENCY} at a time; one worker`);
  const server = await startServer({ MEDIASOUP_WORKERS: '1' });
  const client = httpClient(server.url, { 'x-internal-token': BENCH_TOKEN });
  base = server.url;
  try {
    const router = await call<{ id: string }>(client, 'POST', '/internal/v1/routers', 201, {});
    const whipMs: number[] = [];
    const restMs: number[] = [];
    // Alternated, so that a change of load over the run weighs on both alike.
    for (let i = 0; i < RUNS; i++) {
      whipMs.push(await whipOnce(client, router.id));
      restMs.push(await restOnce(client, router.id));
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const w = sorted(whipMs);
    const r = sorted(restMs);
    info(`first RTP after the first request: WHIP median ${median(w).toFixed(1)} ms, p95 ${percentile(w, 95).toFixed(1)} ms; REST (3 calls) median ${median(r).toFixed(1)} ms, p95 ${percentile(r, 95).toFixed(1)} ms`);
    bench('whip-first-rtp-median-ms', median(w), 'ms');
    bench('whip-first-rtp-p95-ms', percentile(w, 95), 'ms');
    bench('rest-first-rtp-median-ms', median(r), 'ms');
    bench('rest-first-rtp-p95-ms', percentile(r, 95), 'ms');
    const rate = await sessionsPerSecond(client, router.id);
    info(`WHIP sessions set up (POST 201 + DELETE): ${rate.toFixed(1)}/s on one worker`);
    bench('whip-sessions-per-s', rate, 'sessions/s');
  } finally {
    client.close();
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await whip();
}
