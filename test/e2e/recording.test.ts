// Recordings with real ffmpeg and real media: a werift peer sends real VP8 + Opus (encoded by
// Debian's ffmpeg from a generated test source, forwarded packet by packet through the peer's WebRTC
// tracks) into a room, and the relay's recorder writes it to a file that ffprobe and a decode check read
// back. Ends by DELETE, by a producer closing, by ffmpeg being killed and by ffmpeg hanging (reaped after
// RECORDINGS_STALL_S); the bounds answer as documented.
import type { ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RtpPacket } from 'werift';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { decodeErrors, ffprobe, INGEST, testSource, type TestSource } from '../support/ffmpeg.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { SendPeer } from '../support/webrtc/peer.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

type Ev = RelayEvent & Record<string, any>;

/** RECORDINGS_STALL_S of the app under test: shorter than the default 10 s to keep the hang test short. */
const STALL_S = 5;

/** A room with a werift sender whose tracks carry ffmpeg's VP8 and Opus. */
interface Room {
  /** Opus packets (20 ms each) forwarded so far: the media time the generator has really sent. */
  audioSent(): number;
  routerId: string;
  audioId: string;
  videoId: string;
  close(): Promise<void>;
}

/**
 * RTP timestamps from the wall clock at which each frame is forwarded, as a WebRTC sender stamps frames
 * with its capture clock. The generator's own are not wall time: its `-re` inputs, paced one by one,
 * fall behind when the machine is loaded and then catch up in a burst (6 s of wall time carried 7.3 s
 * of its media in a run here), and the file copies whatever timestamps it is given. Packets of one frame
 * share its timestamp; a frame never gets the timestamp of the one before it.
 */
function wallClockStamper(clockRate: number): (timestamp: number) => number {
  const t0 = performance.now();
  let frame: number | undefined;
  let stamped = -1;
  return (timestamp) => {
    if (timestamp !== frame) {
      frame = timestamp;
      stamped = Math.max(stamped + 1, Math.round(((performance.now() - t0) * clockRate) / 1000));
    }
    return stamped >>> 0;
  };
}

describe.skipIf(skipWithout(FFMPEG))('recordings (real ffmpeg, real media)', () => {
  let t: TestApp;
  let relay: RelayClient;
  let dir: string;
  const events: Ev[] = [];
  /** Each recording's ffmpeg, as the relay spawns it. */
  const processes = new Map<string, ChildProcess>();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'recordings-'));
    // One WebRtcServer port and eight for plain transports (two recordings of two tracks, RTP and RTCP each).
    const ports = allocateRtcPorts(9);
    t = await buildTestApp(
      { RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max), RECORDINGS_DIR: dir, RECORDINGS_MAX: '2', RECORDINGS_MIN_FREE_MB: '1', RECORDINGS_STALL_S: String(STALL_S) },
      { areas: { accounts: false }, recordings: { onProcess: (id, child) => processes.set(id, child) } },
    );
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    t.events.bus.listen((event) => void events.push(event as Ev));
  }, 90_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function openRoom(): Promise<Room> {
    const router = await relay.createRouter({});
    const sendTransport = await relay.createTransport({ routerId: router.id, direction: 'send' });
    const sender = await SendPeer.create(sendTransport);
    const sockets: Socket[] = [];
    let source: TestSource | undefined;
    try {
      await relay.connectTransport(sendTransport.id, sender.dtlsParameters);
      await sender.connected();
      const audio = await relay.createProducer({ transportId: sendTransport.id, kind: 'audio', rtpParameters: sender.rtpParameters.audio });
      const video = await relay.createProducer({ transportId: sendTransport.id, kind: 'video', rtpParameters: sender.rtpParameters.video });
      const forward = async (kind: 'audio' | 'video') => {
        const socket = createSocket('udp4');
        sockets.push(socket);
        const stamp = wallClockStamper(kind === 'audio' ? 48_000 : 90_000);
        // RTCP comes to the same port: only RTP of the encoder's payload type is forwarded.
        socket.on('message', (message) => {
          if ((message[1]! & 0x7f) !== INGEST[kind].payloadType) return;
          const packet = RtpPacket.deSerialize(message);
          packet.header.timestamp = stamp(packet.header.timestamp);
          sender.forwardRtp(kind, packet);
        });
        await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
        return { ip: '127.0.0.1', port: socket.address().port };
      };
      source = testSource({ video: await forward('video'), audio: await forward('audio') });
      await waitFor(() => sender.sent.audio > 20 && sender.sent.video > 10, { timeoutMs: 15_000, what: `ffmpeg's RTP through the peer (${source?.stderr()})` });
      const started = source;
      return {
        audioSent: () => sender.sent.audio,
        routerId: router.id,
        audioId: audio.id,
        videoId: video.id,
        async close() {
          await started.stop();
          for (const socket of sockets) socket.close();
          await sender.close();
          await relay.closeRouter(router.id).catch(() => {});
        },
      };
    } catch (error) {
      await source?.stop();
      for (const socket of sockets) socket.close();
      await sender.close();
      throw error;
    }
  }

  const eventsOf = (recordingId: string) => events.filter((e) => e.recordingId === recordingId);
  /** Mid-recording: ffmpeg has written `bytes` of the file (under load its probing takes a while). */
  const fileGrown = (file: string, bytes = 50_000) => waitFor(() => existsSync(file) && statSync(file).size > bytes, { timeoutMs: 20_000, what: 'the file growing' });

  async function expectNothingLeft(): Promise<void> {
    expect(t.media.info().counts).toMatchObject({ plainTransports: 0 });
    expect(t.composition.relay!.recordings.active()).toBe(0);
    await waitFor(() => readdirSync(dir).filter((f) => f.endsWith('.sdp')).length === 0, { timeoutMs: 5000, what: 'the SDP files removed' });
  }

  it('records VP8 + Opus for 6 s into a WebM whose streams, duration and decode check out', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    try {
      const recording = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.videoId], appData: { meeting: 'm1' } });
      // The wall time the recording is open to media: from POST's answer (the relay resumes the consumers
      // towards a listening ffmpeg just before it answers) to DELETE's request (ffmpeg's SIGINT). Not the
      // time POST spends starting ffmpeg, nor the time DELETE waits for the file to be finalised: no media
      // is written then, and counting them made a correct file look 8 % short on a loaded machine.
      const started = Date.now();
      const sentAtStart = room.audioSent();
      expect(recording).toMatchObject({ routerId: room.routerId, producerIds: [room.audioId, room.videoId], state: 'recording', format: 'webm', file: `${recording.id}.webm` });
      expect(eventsOf(recording.id).map((e) => e.type)).toEqual(['recording.started']);
      expect(eventsOf(recording.id)[0]).toMatchObject({ routerId: room.routerId, producerIds: [room.audioId, room.videoId], appData: { meeting: 'm1' } });
      // The recording's plain transports and consumers are the room's like any other.
      const state = await relay.getRouter(room.routerId);
      expect(state.plainTransports.map((p) => p.appData)).toEqual([{ recordingId: recording.id }, { recordingId: recording.id }]);
      expect((await relay.listRecordings({ routerId: room.routerId })).recordings.map((r) => r.id)).toEqual([recording.id]);

      await sleep(6000 - (Date.now() - started));
      const wallS = (Date.now() - started) / 1000;
      // The generator's media forwarded meanwhile (Opus packets of 20 ms), printed: it drifts from the wall
      // time under load, which the forwarder's wall-clock timestamps take out of the file.
      const sentS = ((room.audioSent() - sentAtStart) * 20) / 1000;
      const stopped = await relay.stopRecording(recording.id);
      expect(stopped).toMatchObject({ state: 'stopped', reason: 'api' });
      expect(stopped.bytes).toBeGreaterThan(10_000);
      expect(eventsOf(recording.id).at(-1)).toMatchObject({ type: 'recording.stopped', reason: 'api', file: `${recording.id}.webm`, bytes: stopped.bytes, appData: { meeting: 'm1' } });

      const file = path.join(dir, stopped.file);
      const probe = await ffprobe(file);
      expect(probe.streams.map((s) => [s.codec_type, s.codec_name]).sort()).toEqual([['audio', 'opus'], ['video', 'vp8']]);
      // The check: a duration within 10 % of the wall time (measured as above; the sender stamps
      // its media with the wall clock, see wallClockStamper).
      console.log(`recording: file ${probe.durationS} s, wall ${wallS} s, sent ${sentS} s`);
      expect(Math.abs(probe.durationS - wallS) / wallS, `file ${probe.durationS} s, wall ${wallS} s, sent ${sentS} s`).toBeLessThanOrEqual(0.1);
      expect(await decodeErrors(file)).toBe('');
      await expectNothingLeft();
    } finally {
      await room.close();
    }
  });

  it('records Opus alone into Ogg; RECORDINGS_MAX answers 429; ids never reach a path', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    try {
      const audio = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId] });
      expect(audio).toMatchObject({ format: 'ogg', file: `${audio.id}.ogg` });
      const video = await relay.createRecording({ routerId: room.routerId, producerIds: [room.videoId] });
      await expect(relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId] })).rejects.toMatchObject({
        status: 429,
        code: 'RECORDING_CAPACITY_EXCEEDED',
        details: { max: 2 },
      });
      await expect(relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.audioId] })).rejects.toMatchObject({ status: 400 });
      for (const id of ['..%2F..%2Fetc%2Fpasswd', `${audio.id}.ogg`, '%2e%2e']) {
        const res = await t.app.request(`/internal/v1/recordings/${id}`, { headers: { 'x-internal-token': t.internalToken } });
        expect(res.status).toBe(404);
      }
      await sleep(3000);
      await relay.stopRecording(video.id);
      const stopped = await relay.stopRecording(audio.id);
      const file = path.join(dir, stopped.file);
      const probe = await ffprobe(file);
      expect(probe.formatName).toBe('ogg');
      expect(probe.streams.map((s) => s.codec_name)).toEqual(['opus']);
      expect(probe.durationS).toBeGreaterThan(2);
      expect(await decodeErrors(file)).toBe('');
      await expectNothingLeft();
    } finally {
      await room.close();
    }
  });

  it('a producer closed mid-recording stops it (producer_closed) with a playable file', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    try {
      const recording = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.videoId] });
      const growing = path.join(dir, `${recording.id}.webm`);
      await fileGrown(growing);
      await relay.closeProducer(room.videoId);
      // ffmpeg finalises once its input ends: at once while audio still flows, after its read timeout (about 10 s) at most.
      await waitFor(() => eventsOf(recording.id).some((e) => e.type === 'recording.stopped'), { timeoutMs: 30_000, what: 'recording.stopped' });
      expect(eventsOf(recording.id).at(-1)).toMatchObject({ type: 'recording.stopped', reason: 'producer_closed' });
      expect((await relay.getRecording(recording.id)).state).toBe('stopped');
      const file = path.join(dir, `${recording.id}.webm`);
      expect((await ffprobe(file)).streams.length).toBe(2);
      expect(await decodeErrors(file)).toBe('');
      await expectNothingLeft();
    } finally {
      await room.close();
    }
  });

  it('the room closing stops it (router_closed, not a failure) with a playable file', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    try {
      const recording = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.videoId] });
      const growing = path.join(dir, `${recording.id}.webm`);
      await fileGrown(growing);
      // Its producers' transport closes before the router does, and takes the recording's consumers along.
      await relay.closeRouter(room.routerId);
      await waitFor(() => eventsOf(recording.id).some((e) => e.type !== 'recording.started'), { timeoutMs: 30_000, what: 'the recording ended' });
      expect(eventsOf(recording.id).map((e) => [e.type, e.reason])).toEqual([
        ['recording.started', undefined],
        ['recording.stopped', 'router_closed'],
      ]);
      expect((await ffprobe(growing)).streams.length).toBe(2);
      expect(await decodeErrors(growing)).toBe('');
      await expectNothingLeft();
    } finally {
      await room.close();
    }
  });

  it('DELETE after the media stopped (producers paused) ends ffmpeg within its bound and leaves a finished, playable file', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    try {
      const recording = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.videoId] });
      const file = path.join(dir, `${recording.id}.webm`);
      await fileGrown(file);
      // Two more seconds of media in the file before the pause (50 kB can be the first key frame alone,
      // a fraction of a second on a loaded machine): the finished file's duration below exceeds 1 s.
      await sleep(2000);
      await relay.pauseProducer(room.audioId);
      await relay.pauseProducer(room.videoId);
      await sleep(1000);
      // ffmpeg now waits in its read, kept alive by the consumers' RTCP: the stop must end that wait.
      const started = Date.now();
      const stopped = await relay.stopRecording(recording.id);
      const tookMs = Date.now() - started;
      console.log(`stop of a recording whose media stopped took ${tookMs} ms`);
      expect(stopped).toMatchObject({ state: 'stopped', reason: 'api' });
      // A second SIGINT after 1 s breaks ffmpeg's read (ffmpeg-stop.ts), not its ~10 s read timeout;
      // the container is then finished by a stream copy. The bound leaves room for a loaded machine.
      expect(tookMs).toBeLessThan(8_000);
      expect(eventsOf(recording.id).at(-1)).toMatchObject({ type: 'recording.stopped', reason: 'api' });
      const probe = await ffprobe(file);
      expect(probe.streams.length).toBe(2);
      // A finished container: its duration is known.
      expect(probe.durationS).toBeGreaterThan(1);
      expect(await decodeErrors(file)).toBe('');
      await expectNothingLeft();
    } finally {
      await room.close();
    }
  });

  it('ffmpeg killed: recording.failed and nothing left behind (transports, consumers, ports, process)', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    try {
      const consumersBefore = t.media.info().counts.consumers;
      const recording = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.videoId], appData: { meeting: 'm2' } });
      expect(t.media.info().counts.consumers).toBe(consumersBefore + 2);
      const child = processes.get(recording.id)!;
      await sleep(1500);
      child.kill('SIGKILL');
      await waitFor(() => eventsOf(recording.id).some((e) => e.type === 'recording.failed'), { timeoutMs: 10_000, what: 'recording.failed' });
      expect(eventsOf(recording.id).at(-1)).toMatchObject({ type: 'recording.failed', routerId: room.routerId, appData: { meeting: 'm2' } });
      expect((eventsOf(recording.id).at(-1) as { error: string }).error).toMatch(/SIGKILL/);
      expect(await relay.getRecording(recording.id)).toMatchObject({ state: 'failed' });
      await waitFor(() => t.media.info().counts.consumers === consumersBefore, { timeoutMs: 5000, what: "the recording's consumers closed" });
      expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
      await expectNothingLeft();
      // A stopped-or-failed recording answers DELETE with its state, and no event more.
      const count = eventsOf(recording.id).length;
      expect(await relay.stopRecording(recording.id)).toMatchObject({ state: 'failed' });
      expect(eventsOf(recording.id)).toHaveLength(count);
    } finally {
      await room.close();
    }
  });

  it('an ffmpeg that stops writing (SIGSTOP) while its RTP keeps coming is reaped within RECORDINGS_STALL_S; paused producers are no stall', { timeout: 90_000 }, async () => {
    const room = await openRoom();
    let child: ChildProcess | undefined;
    try {
      const consumersBefore = t.media.info().counts.consumers;
      const recording = await relay.createRecording({ routerId: room.routerId, producerIds: [room.audioId, room.videoId], appData: { meeting: 'm3' } });
      child = processes.get(recording.id)!;
      const file = path.join(dir, `${recording.id}.webm`);
      await fileGrown(file, 20_000);

      // No RTP, no growth, no stall: a recording of paused producers outlives the bound.
      await relay.pauseProducer(room.audioId);
      await relay.pauseProducer(room.videoId);
      await sleep((STALL_S + 2) * 1000);
      expect((await relay.getRecording(recording.id)).state).toBe('recording');
      await relay.resumeProducer(room.audioId);
      await relay.resumeProducer(room.videoId);
      const sizeAtResume = statSync(file).size;
      await waitFor(() => statSync(file).size > sizeAtResume, { timeoutMs: 5000, what: 'the file growing again' });

      // ffmpeg stopped: its RTP still comes (the relay's consumers keep sending), its file no longer grows.
      const stoppedAt = Date.now();
      child.kill('SIGSTOP');
      await waitFor(() => eventsOf(recording.id).some((e) => e.type === 'recording.failed'), { timeoutMs: (STALL_S + 6) * 1000, what: 'recording.failed' });
      const tookMs = Date.now() - stoppedAt;
      const failed = eventsOf(recording.id).at(-1) as Ev & { error: string };
      console.log(`stall: reaped ${tookMs} ms after SIGSTOP (RECORDINGS_STALL_S ${STALL_S}): ${failed.error}`);
      expect(failed).toMatchObject({ type: 'recording.failed', routerId: room.routerId, appData: { meeting: 'm3' } });
      expect(failed.error).toMatch(/stopped writing/);
      // The clock starts at the first check (once a second) that sees RTP sent and no growth.
      expect(tookMs).toBeGreaterThanOrEqual((STALL_S - 1.5) * 1000);
      expect(tookMs).toBeLessThanOrEqual((STALL_S + 3) * 1000);

      // Nothing left: the process gone (SIGKILL reaches a stopped process), transports, consumers, ports and registry released; the partial file kept.
      const gone = child;
      await waitFor(() => gone.exitCode !== null || gone.signalCode !== null, { timeoutMs: 5000, what: 'ffmpeg gone' });
      expect(child.signalCode).toBe('SIGKILL');
      await waitFor(() => t.media.info().counts.consumers === consumersBefore, { timeoutMs: 5000, what: "the recording's consumers closed" });
      await expectNothingLeft();
      expect(await relay.getRecording(recording.id)).toMatchObject({ state: 'failed', error: failed.error });
      expect(statSync(file).size).toBeGreaterThan(20_000);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await room.close();
    }
  });

  it('refuses to start with RECORDINGS_MIN_FREE_MB not free (507), and names a missing router or producer', { timeout: 60_000 }, async () => {
    const ports = allocateRtcPorts(1);
    const full = await buildTestApp(
      { RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max), RECORDINGS_DIR: dir, RECORDINGS_MIN_FREE_MB: '100000000' },
      { areas: { accounts: false } },
    );
    try {
      const client = createRelayClient({ baseUrl: 'http://relay.test', token: full.internalToken, fetch: full.app.request });
      const router = await client.createRouter({});
      const transport = await client.createTransport({ routerId: router.id, direction: 'send' });
      const peer = await SendPeer.create(transport);
      try {
        const producer = await client.createProducer({ transportId: transport.id, kind: 'audio', rtpParameters: peer.rtpParameters.audio });
        await expect(client.createRecording({ routerId: router.id, producerIds: [producer.id] })).rejects.toMatchObject({
          status: 507,
          code: 'RECORDING_STORAGE_FULL',
          details: { minFreeMb: 100_000_000 },
        });
        await expect(client.createRecording({ routerId: router.id, producerIds: ['nope'] })).rejects.toMatchObject({ status: 404, details: { resource: 'producer' } });
        await expect(client.createRecording({ routerId: 'nope', producerIds: [producer.id] })).rejects.toMatchObject({ status: 404, details: { resource: 'router' } });
        expect(full.composition.relay!.recordings.active()).toBe(0);
      } finally {
        await peer.close();
      }
    } finally {
      await full.close();
    }
  });
});
