// recording: what one recorded ~1 Mbit/s VP8 track costs, over 10 concurrent recordings (issue 30).
// A VP8 clip (640x360, 30 frames/s, ~1 Mbit/s, a key frame each second) is encoded once; one ffmpeg
// then sends it by stream copy, at its own pace (-re), as 10 RTP streams into 10 plain transports of
// the real server (10 producers). Two phases with the same media: without recordings, then with one
// recording per producer (started before the clip, so every frame sent can be kept). Printed:
//   recording-cpu-pct-per-track: (CPU of the 10 recording ffmpegs + the relay's extra CPU, i.e. its node
//     process and mediasoup workers with recordings minus without) / 10, as percent of one core;
//   recording-frames-kept-ratio: frames in the 10 files (ffprobe -count_frames) / frames sent (10 x the clip's).
// The recordings end by their room closing once the clip is sent (see below), so every file is finalised.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { benchRtcPorts } from '../test/support/ports.js';
import { bench, BENCH_TOKEN, cpuMs, httpClient, info, rssMb, startServer, type HttpClient } from './lib.js';

const run = promisify(execFile);
const TRACKS = 10;
const CLIP_S = Number(process.env.BENCH_RECORDING_CLIP_S ?? 20);
const PAYLOAD_TYPE = 101;

interface Target {
  port: number;
  rtcpPort: number;
}

async function call<T = any>(client: HttpClient, method: string, pathname: string, wanted: number, body?: unknown): Promise<T> {
  const res = await client.request<T>(method, pathname, body);
  if (res.status !== wanted) throw new Error(`${method} ${pathname}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function countFrames(file: string): Promise<number> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', file]);
  return Number(stdout.trim());
}

/** The ffmpeg processes the server started (its recordings), from /proc. */
function childFfmpegs(serverPid: number): number[] {
  const children = readFileSync(`/proc/${serverPid}/task/${serverPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ffmpeg';
    } catch {
      return false;
    }
  });
}

/** 10 producers on 10 plain transports in a new router: comedia, RTCP on a port of its own as ffmpeg sends it. */
async function openRoom(client: HttpClient): Promise<{ routerId: string; producers: string[]; ports: Target[] }> {
  const router = await call(client, 'POST', '/internal/v1/routers', 201, {});
  const producers: string[] = [];
  const ports: Target[] = [];
  for (let i = 0; i < TRACKS; i++) {
    const plain = await call(client, 'POST', '/internal/v1/plain-transports', 201, { routerId: router.id, comedia: true, rtcpMux: false });
    const producer = await call(client, 'POST', '/internal/v1/producers', 201, {
      transportId: plain.id,
      kind: 'video',
      rtpParameters: { codecs: [{ mimeType: 'video/VP8', payloadType: PAYLOAD_TYPE, clockRate: 90000 }], encodings: [{ ssrc: 1000 + i }] },
    });
    producers.push(producer.id);
    ports.push({ port: plain.port, rtcpPort: plain.rtcpPort });
  }
  return { routerId: router.id, producers, ports };
}

/** Sends the clip once, at its pace, to each port (stream copy: the sender's CPU is not what is measured). */
async function sendClip(clip: string, ports: Target[]): Promise<void> {
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-re', '-i', clip];
  ports.forEach(({ port, rtcpPort }, i) => args.push('-map', '0:v', '-c', 'copy', '-payload_type', String(PAYLOAD_TYPE), '-ssrc', String(1000 + i), '-f', 'rtp', `rtp://127.0.0.1:${port}?rtcpport=${rtcpPort}&pkt_size=1200`));
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`sender exited ${code}: ${stderr.slice(-500)}`);
}

export async function recordingBench(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-recording-'));
  const recordings = path.join(dir, 'recordings');
  const clip = path.join(dir, 'clip.webm');
  // 10 ingest transports and 10 recordings at once (RTP and RTCP each), and the WebRtcServer.
  const ports = benchRtcPorts(3);
  const server = await startServer({
    MEDIASOUP_WORKERS: '1',
    RTC_MIN_PORT: String(ports.min),
    RTC_MAX_PORT: String(ports.max),
    RECORDINGS_DIR: recordings,
    RECORDINGS_MIN_FREE_MB: '1',
    RECORDINGS_MAX: String(TRACKS),
    MEDIASOUP_MAX_PLAIN_TRANSPORTS_PER_ROUTER: String(TRACKS * 2),
  });
  const client = httpClient(server.url, { 'x-internal-token': BENCH_TOKEN });
  try {
    await run('ffmpeg', [
      ...['-nostdin', '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=640x360:rate=30:duration=${CLIP_S}`],
      ...['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '1M', '-minrate', '1M', '-maxrate', '1M', '-g', '30', '-keyint_min', '30', '-y', clip],
    ]);
    const framesInClip = await countFrames(clip);
    const bitrate = Number((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=bit_rate', '-of', 'csv=p=0', clip])).stdout.trim());
    info(`clip: ${framesInClip} frames, ${(bitrate / 1e6).toFixed(2)} Mbit/s, sent to ${TRACKS} producers; one mediasoup worker`);
    const workerPids = ((await call(client, 'GET', '/internal/info', 200)).workers as { pid: number }[]).map((w) => w.pid);
    const relayCpu = () => cpuMs(server.pid) + workerPids.reduce((sum, pid) => sum + cpuMs(pid), 0);

    // Without recordings.
    const bare = await openRoom(client);
    let t0 = performance.now();
    let c0 = relayCpu();
    await sendClip(clip, bare.ports);
    const bareMs = performance.now() - t0;
    const bareCpuMs = relayCpu() - c0;
    await call(client, 'DELETE', `/internal/v1/routers/${bare.routerId}`, 204);

    // With one recording per producer, started before the first frame.
    const room = await openRoom(client);
    const started: string[] = [];
    for (const producerId of room.producers) {
      started.push((await call(client, 'POST', '/internal/v1/recordings', 201, { routerId: room.routerId, producerIds: [producerId] })).id);
    }
    const recorders = childFfmpegs(server.pid);
    if (recorders.length !== TRACKS) throw new Error(`${recorders.length} recording ffmpegs, not ${TRACKS}`);
    t0 = performance.now();
    c0 = relayCpu();
    const r0 = recorders.map(cpuMs);
    await sendClip(clip, room.ports);
    const recordedMs = performance.now() - t0;
    const recordedCpuMs = relayCpu() - c0;
    const ffmpegCpuMs = recorders.reduce((sum, pid, i) => sum + cpuMs(pid) - r0[i]!, 0);
    const ffmpegRssMb = recorders.reduce((sum, pid) => sum + rssMb(pid), 0) / TRACKS;
    // Proportional set size: shared libraries (libavcodec and the rest) split among the processes that map them.
    const pssMb = (pid: number) => Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
    const ffmpegPssMb = recorders.reduce((sum, pid) => sum + pssMb(pid), 0) / TRACKS;
    // Stopped once the clip has ended: each ffmpeg finalises its file after its RTP read timeout (~10 s).
    // The room closed once the clip has ended: a DELETE of a recording now would wait for ffmpeg in vain
    // (with the consumers alive, the relay's RTCP keeps its RTP read from timing out); with the consumers
    // gone, ffmpeg finalises each file after its read timeout (~10 s): recording.stopped.
    await sleep(500);
    await call(client, 'DELETE', `/internal/v1/routers/${room.routerId}`, 204);
    const ends: { state: string; reason?: string; error?: string }[] = [];
    for (const id of started) {
      for (let deadline = Date.now() + 30_000; ; await sleep(250)) {
        const recording = await call<{ state: string; reason?: string; error?: string }>(client, 'GET', `/internal/v1/recordings/${id}`, 200);
        if (recording.state !== 'recording' && recording.state !== 'stopping') {
          ends.push(recording);
          break;
        }
        if (Date.now() > deadline) throw new Error(`recording ${id} still ${recording.state} 30 s after its room closed`);
      }
    }
    // Their producers' transports close first: reason producer_closed.
    const unlike = ends.filter((e) => e.state !== 'stopped');
    if (unlike.length) throw new Error(`recordings ended otherwise: ${JSON.stringify(unlike)}`);

    const files = readdirSync(recordings).filter((f) => f.endsWith('.webm'));
    const kept = (await Promise.all(files.map((f) => countFrames(path.join(recordings, f))))).reduce((a, b) => a + b, 0);
    // Per second of media: the two phases' wall times differ a little.
    const extraRelayPct = (recordedCpuMs / recordedMs - bareCpuMs / bareMs) * 100;
    const ffmpegPct = (ffmpegCpuMs / recordedMs) * 100;
    info(
      `relay (node + worker): ${((bareCpuMs / bareMs) * 100).toFixed(1)} % of a core without recordings, ${((recordedCpuMs / recordedMs) * 100).toFixed(1)} % with ${TRACKS}; ` +
        `recording ffmpegs ${ffmpegPct.toFixed(1)} % in all, ${ffmpegRssMb.toFixed(0)} MB RSS (${ffmpegPssMb.toFixed(0)} MB PSS) each; ${files.length} files, ${kept} of ${framesInClip * TRACKS} frames`,
    );
    bench('recording-cpu-pct-per-track', (ffmpegPct + extraRelayPct) / TRACKS, '%');
    bench('recording-frames-kept-ratio', kept / (framesInClip * TRACKS), 'ratio');
  } finally {
    await server.stop();
    if (process.env.BENCH_KEEP) info(`kept ${dir}`); else rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await recordingBench();
}
