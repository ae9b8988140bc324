// Recordings across the service's own end, with real child service processes, real ffmpeg (a generated
// VP8 + Opus source ingested over plain RTP) and a local s3rver: SIGTERM while the producers are paused
// stops the recording within the shutdown deadline (recording.stopped on the webhook, the upload's start
// logged and owed in its manifest, no ffmpeg left); the next start on the same RECORDINGS_DIR uploads it.
// SIGKILL mid-recording: the ffmpeg processes are gone within seconds, and the next start finalises the
// file into a playable one, reports recording.recovered and uploads it.
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import { ffprobe, ingestRtpParameters, testSource, type TestSource } from '../support/ffmpeg.js';
import { childServerRtcPorts } from '../support/ports.js';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

const BUCKET = 'recordings';
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
const WEBHOOK_SECRET = 'recording-lifecycle-webhook-secret-0123456789';

type Event = { type: string; recordingId?: string; [key: string]: unknown };

/** A webhook endpoint collecting every delivered event. */
async function webhookReceiver(): Promise<{ url: string; events: Event[]; close(): Promise<void> }> {
  const events: Event[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        events.push(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: Event[] }).events);
      } catch {
        // not a batch
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, events, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A TCP server on 127.0.0.1 that accepts and never answers (a hung storage endpoint). */
async function hungServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The ffmpeg processes whose parent is `pid` (Linux /proc). */
async function ffmpegChildrenOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const match = /^\d+ \((.*)\) (\S) (\d+)/.exec(stat);
    if (match && match[1] === 'ffmpeg' && Number(match[3]) === pid) found.push(Number(name));
  }
  return found;
}

/** Whether a process runs (a zombie has ended: it only waits to be reaped). */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const state = /^\d+ \(.*\) (\S)/.exec(stat)?.[1];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** A service with recordings into `dir`, its events to `webhook`; its own ten RTC ports (ingest and recording plain transports). */
async function startRecordingService(dir: string, webhook: string, env: Record<string, string> = {}): Promise<{ server: ServerProcess; relay: RelayClient }> {
  const rtc = childServerRtcPorts(10);
  const server = await startServer(
    {
      RTC_MIN_PORT: String(rtc.min),
      RTC_MAX_PORT: String(rtc.max),
      RECORDINGS_DIR: dir,
      RECORDINGS_MIN_FREE_MB: '1',
      EVENTS_WEBHOOK_URL: webhook,
      EVENTS_WEBHOOK_SECRET: WEBHOOK_SECRET,
      LOG_LEVEL: 'info',
      ...env,
    },
    { timeoutMs: 90_000 },
  );
  return { server, relay: createRelayClient({ baseUrl: server.url, token: SERVER_TOKEN }) };
}

/** A room fed by ffmpeg over plain RTP (VP8 + Opus), recording both producers. */
async function recordIngest(relay: RelayClient): Promise<{ source: TestSource; recordingId: string; audioId: string; videoId: string }> {
  const router = await relay.createRouter({});
  const video = await relay.createPlainTransport({ routerId: router.id, comedia: true, rtcpMux: false });
  const audio = await relay.createPlainTransport({ routerId: router.id, comedia: true, rtcpMux: false });
  const videoProducer = await relay.createProducer({ transportId: video.id, kind: 'video', rtpParameters: ingestRtpParameters.video });
  const audioProducer = await relay.createProducer({ transportId: audio.id, kind: 'audio', rtpParameters: ingestRtpParameters.audio });
  const source = testSource({ video: { ip: video.ip, port: video.port, rtcpPort: video.rtcpPort! }, audio: { ip: audio.ip, port: audio.port, rtcpPort: audio.rtcpPort! } });
  try {
    // The producers have media before the recording starts (was a fixed 2 s; the ingest's first packets arrive well within it).
    for (const producerId of [videoProducer.id, audioProducer.id]) {
      await waitFor(async () => (await relay.producerStats(producerId)).some((s) => s.type === 'inbound-rtp' && Number(s.packetCount ?? 0) > 30), {
        timeoutMs: 20_000,
        what: `the ingest's RTP at the relay (${source.stderr()})`,
      });
    }
    const recording = await relay.createRecording({ routerId: router.id, producerIds: [audioProducer.id, videoProducer.id], appData: { meeting: 'lifecycle' } });
    return { source, recordingId: recording.id, audioId: audioProducer.id, videoId: videoProducer.id };
  } catch (error) {
    await source.stop();
    throw error;
  }
}

describe.skipIf(skipWithout(FFMPEG))('recordings across the service stopping and dying (child processes, real ffmpeg, s3rver)', () => {
  let dir: string;
  let store: string;
  let s3: S3rver;
  let s3Url: string;
  let hook: Awaited<ReturnType<typeof webhookReceiver>>;
  const sources: TestSource[] = [];
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'recordings-lifecycle-'));
    store = await mkdtemp(path.join(tmpdir(), 's3rver-lifecycle-'));
    s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: store, configureBuckets: [{ name: BUCKET, configs: [] }] });
    s3Url = `http://127.0.0.1:${(await s3.run()).port}`;
    hook = await webhookReceiver();
  }, 60_000);

  afterAll(async () => {
    for (const source of sources) await source.stop();
    for (const server of servers) await server.stop(1000);
    await hook?.close();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(store, { recursive: true, force: true });
  }, 60_000);

  /** Waits until the recording's file holds a few seconds of media (the test source sends about 130 kB/s, less on a loaded machine). */
  async function recorded(recordingId: string): Promise<void> {
    const size = () => {
      try {
        return statSync(path.join(dir, `${recordingId}.webm`)).size;
      } catch {
        return 0;
      }
    };
    await waitFor(() => size() > 200_000, { timeoutMs: 60_000, what: 'a few seconds of media in the file' });
  }

  async function storedObject(key: string): Promise<Buffer> {
    const client = new S3Client({ endpoint: s3Url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY } });
    try {
      const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return Buffer.from(await object.Body!.transformToByteArray());
    } finally {
      client.destroy();
    }
  }

  it('SIGTERM with the producers paused: stopped within the deadline, reported, no ffmpeg left; the upload owed resumes at the next start', { timeout: 180_000 }, async () => {
    const hung = await hungServer();
    const storage = { RECORDINGS_S3_BUCKET: BUCKET, RECORDINGS_S3_REGION: 'us-east-1', RECORDINGS_KEEP_LOCAL: '1', ...CREDENTIALS };
    let first: ServerProcess | undefined;
    try {
      // Its storage accepts and never answers: the upload is still under way when the service stops.
      const started = await startRecordingService(dir, hook.url, { ...storage, RECORDINGS_S3_ENDPOINT: hung.url });
      first = started.server;
      servers.push(first);
      const { relay } = started;
      const { source, recordingId, audioId, videoId } = await recordIngest(relay);
      sources.push(source);
      await recorded(recordingId);
      await relay.pauseProducer(audioId);
      await relay.pauseProducer(videoId);
      await sleep(1500);
      const ffmpegs = await ffmpegChildrenOf(first.pid);
      expect(ffmpegs).toHaveLength(1);

      const signalled = performance.now();
      first.child.kill('SIGTERM');
      const exit = await first.exited;
      const tookMs = exit.at - signalled;
      console.log(`SIGTERM with paused producers: exit ${exit.code} after ${Math.round(tookMs)} ms`);
      expect(exit.code).toBe(0);
      expect(first.logLines().map((l) => l.msg)).not.toContain('shutdown deadline passed; exiting');
      for (const pid of ffmpegs) expect(await running(pid)).toBe(false);

      const stopped = hook.events.find((e) => e.type === 'recording.stopped' && e.recordingId === recordingId);
      expect(stopped).toMatchObject({ reason: 'shutdown', appData: { meeting: 'lifecycle' } });
      expect(stopped!.bytes).toBeGreaterThan(10_000);
      // Its upload began (or, when finishing the container did not fit in the shutdown, was deferred to
      // the next start) and was cut short by the exit, not failed: no event says it failed, its manifest says it is owed.
      const uploadLines = first.logLines().filter((l) => l.recordingId === recordingId && /^recording upload (started|deferred)/.test(l.msg));
      expect(uploadLines).toHaveLength(1);
      console.log(`at shutdown: ${uploadLines[0]!.msg}`);
      expect(hook.events.filter((e) => e.recordingId === recordingId).map((e) => e.type)).toEqual(['recording.started', 'recording.stopped']);
      expect(JSON.parse(await readFile(path.join(dir, `${recordingId}.json`), 'utf8'))).toMatchObject({ id: recordingId, state: 'stopped' });

      const file = path.join(dir, String(stopped!.file));
      expect((await ffprobe(file)).streams.map((s) => s.codec_name).sort()).toEqual(['opus', 'vp8']);
      await source.stop();

      // The next start, with a storage that answers: the owed upload goes up.
      const second = await startRecordingService(dir, hook.url, { ...storage, RECORDINGS_S3_ENDPOINT: s3Url });
      servers.push(second.server);
      await waitFor(() => hook.events.some((e) => e.recordingId === recordingId && (e.type === 'recording.uploaded' || e.type === 'recording.failed')), { timeoutMs: 30_000, what: 'the resumed upload' });
      const uploaded = hook.events.find((e) => e.recordingId === recordingId && e.type === 'recording.uploaded');
      expect(uploaded).toMatchObject({ key: stopped!.file, bytes: statSync(file).size });
      // Finished: a container with its duration.
      const probe = await ffprobe(file);
      expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['opus', 'vp8']);
      expect(probe.durationS).toBeGreaterThan(2);
      expect((await storedObject(String(stopped!.file))).equals(readFileSync(file))).toBe(true);
      expect(await second.relay.getRecording(recordingId)).toMatchObject({ state: 'stopped', upload: 'uploaded' });
      await waitFor(async () => !(await readdir(dir)).includes(`${recordingId}.json`), { timeoutMs: 5000, what: 'the manifest removed once uploaded' });
      await second.server.stop();
    } finally {
      await first?.stop(1000);
      await hung.close();
    }
  });

  it('SIGKILL mid-recording: no ffmpeg outlives it by more than a few seconds; the next start recovers the file, reports and uploads it', { timeout: 180_000 }, async () => {
    const { server, relay } = await startRecordingService(dir, hook.url);
    servers.push(server);
    const { source, recordingId } = await recordIngest(relay);
    sources.push(source);
    await recorded(recordingId);
    const ffmpegs = await ffmpegChildrenOf(server.pid);
    expect(ffmpegs).toHaveLength(1);

    const killed = performance.now();
    server.child.kill('SIGKILL');
    await server.exited;
    await waitFor(async () => !(await Promise.all(ffmpegs.map(running))).some(Boolean), { timeoutMs: 4000, what: 'the ffmpeg of a killed service gone' });
    console.log(`ffmpeg gone ${Math.round(performance.now() - killed)} ms after the service's SIGKILL`);
    await source.stop();
    expect(JSON.parse(await readFile(path.join(dir, `${recordingId}.json`), 'utf8'))).toMatchObject({ id: recordingId, state: 'recording' });
    expect(await readdir(dir)).toContain(`${recordingId}.sdp`);

    const next = await startRecordingService(dir, hook.url, { RECORDINGS_S3_BUCKET: BUCKET, RECORDINGS_S3_ENDPOINT: s3Url, RECORDINGS_S3_REGION: 'us-east-1', RECORDINGS_KEEP_LOCAL: '1', ...CREDENTIALS });
    servers.push(next.server);
    await waitFor(() => hook.events.some((e) => e.recordingId === recordingId && (e.type === 'recording.uploaded' || e.type === 'recording.failed')), { timeoutMs: 30_000, what: 'the recovered recording uploaded' });
    const mine = hook.events.filter((e) => e.recordingId === recordingId);
    expect(mine.map((e) => e.type)).toEqual(['recording.started', 'recording.recovered', 'recording.uploaded']);
    const recovered = mine[1]!;
    expect(recovered).toMatchObject({ file: `${recordingId}.webm`, appData: { meeting: 'lifecycle' } });
    const file = path.join(dir, `${recordingId}.webm`);
    const probe = await ffprobe(file);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['opus', 'vp8']);
    // Finalised: a container with its duration.
    expect(probe.durationS).toBeGreaterThan(2);
    expect(recovered.bytes).toBe(readFileSync(file).length);
    expect((await storedObject(`${recordingId}.webm`)).equals(readFileSync(file))).toBe(true);
    expect(await next.relay.getRecording(recordingId)).toMatchObject({ state: 'stopped', upload: 'uploaded', bytes: recovered.bytes });
    // Nothing of the dead run's is left but the file: no SDP, no manifest once uploaded.
    await waitFor(async () => (await readdir(dir)).filter((name) => name.startsWith(recordingId)).join() === `${recordingId}.webm`, { timeoutMs: 5000, what: 'only the file left' });
    await next.server.stop();
  });
});
