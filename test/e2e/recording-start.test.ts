// A recording's start against the races and the network, with real ffmpeg and real media: Debian's
// ffmpeg sends a generated VP8 + Opus source into two plain transports (the ingest of plain-ingest.test.ts),
// and the relay records those producers. DELETE and a producer's close raced against the start leave
// nothing behind and never answer 500; ffmpeg's sockets are on loopback and take RTP from the relay's
// address only; a recording started while its producers are paused waits for their media.
import { execFile, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RtpPacket, RtpHeader } from 'werift';
import { RelayClientError } from '../../src/client/errors.js';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { decodeErrors, ffprobe, ingestRtpParameters, testSource, type TestSource } from '../support/ffmpeg.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

const run = promisify(execFile);
type Ev = RelayEvent & Record<string, any>;

/** The local addresses of a process's UDP sockets, read from /proc (its fds' socket inodes in /proc/net/udp{,6}). */
function udpSocketsOf(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const link = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const match = /^socket:\[(\d+)\]$/.exec(link);
    if (match) inodes.add(match[1]!);
  }
  const sockets: string[] = [];
  for (const table of ['udp', 'udp6']) {
    const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (!inodes.has(fields[9]!)) continue;
      const [hexIp, hexPort] = fields[1]!.split(':') as [string, string];
      // IPv4 in /proc is the address's 32-bit word in host (little-endian) order.
      const ip = table === 'udp' ? [...Buffer.from(hexIp, 'hex').reverse()].join('.') : `[${hexIp}]`;
      sockets.push(`${ip}:${parseInt(hexPort, 16)}`);
    }
  }
  return sockets;
}

/** Packets ffprobe reads from a file's streams, by codec type. */
async function packetCounts(file: string): Promise<Record<string, number>> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_packets', '-show_entries', 'stream=codec_type,nb_read_packets', '-of', 'json', file]);
  const parsed = JSON.parse(stdout) as { streams: { codec_type: string; nb_read_packets: string }[] };
  return Object.fromEntries(parsed.streams.map((s) => [s.codec_type, Number(s.nb_read_packets)]));
}

describe.skipIf(skipWithout(FFMPEG))('a recording\'s start: races, sources, muted producers (real ffmpeg)', () => {
  let t: TestApp;
  let relay: RelayClient;
  let dir: string;
  let source: TestSource | undefined;
  let routerId: string;
  const ingest: { audio?: string; video?: string } = {};
  const producers: { audio: string; video: string } = { audio: '', video: '' };
  const events: Ev[] = [];
  /** Each recording's ffmpeg, as the relay spawns it. */
  const processes = new Map<string, ChildProcess>();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'recordings-start-'));
    // One WebRtcServer port, four for the ingest's two plain transports and four for a recording's two
    // (RTP and RTCP each), and eight more: a leak past them answers instead of hanging.
    const ports = allocateRtcPorts(17);
    t = await buildTestApp(
      { RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max), RECORDINGS_DIR: dir, RECORDINGS_MIN_FREE_MB: '1', RECORDINGS_STALL_S: '5' },
      { areas: { accounts: false }, recordings: { onProcess: (id, child) => processes.set(id, child) } },
    );
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    t.events.bus.listen((event) => void events.push(event as Ev));
    const router = await relay.createRouter({ appData: { room: 'recording-start' } });
    routerId = router.id;
    const video = await relay.createPlainTransport({ routerId, comedia: true, rtcpMux: false });
    const audio = await relay.createPlainTransport({ routerId, comedia: true, rtcpMux: false });
    ingest.video = video.id;
    ingest.audio = audio.id;
    producers.video = (await relay.createProducer({ transportId: video.id, kind: 'video', rtpParameters: ingestRtpParameters.video })).id;
    producers.audio = (await relay.createProducer({ transportId: audio.id, kind: 'audio', rtpParameters: ingestRtpParameters.audio })).id;
    source = testSource({ video: { ip: video.ip, port: video.port, rtcpPort: video.rtcpPort! }, audio: { ip: audio.ip, port: audio.port, rtcpPort: audio.rtcpPort! } }, 600);
    await waitFor(async () => (await relay.producerStats(producers.video)).some((s) => s.type === 'inbound-rtp' && Number(s.packetCount ?? 0) > 30), {
      timeoutMs: 20_000,
      what: `the ingest's RTP at the relay (${source.stderr()})`,
    });
  }, 90_000);

  afterAll(async () => {
    await source?.stop();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const eventsOf = (recordingId: string) => events.filter((e) => e.recordingId === recordingId);
  const recordings = () => t.composition.relay!.recordings;
  /** For a wait's failure message: the recording's state, its ffmpeg, the producers' stats and the ingest's stderr. */
  const situation = async (recordingId: string) =>
    JSON.stringify({
      recording: recordings().get(recordingId),
      ffmpeg: processes.get(recordingId)?.pid ?? null,
      audio: await relay.producerStats(producers.audio).catch(String),
      video: await relay.producerStats(producers.video).catch(String),
      ingest: source?.stderr().slice(-500),
    });

  /** The room holds its ingest only: two plain transports, two producers, no consumer; no recording under way, no SDP left. */
  async function expectOnlyTheIngest(): Promise<void> {
    await waitFor(() => recordings().active() === 0, { timeoutMs: 30_000, what: 'no recording under way' });
    await waitFor(() => t.media.info().counts.plainTransports === 2 && t.media.info().counts.consumers === 0, {
      timeoutMs: 5000,
      what: `the recordings' transports and consumers closed (${JSON.stringify(t.media.info().counts)})`,
    });
    const state = await relay.getRouter(routerId);
    expect(state.plainTransports.map((p) => p.id).sort()).toEqual([ingest.video, ingest.audio].sort());
    expect(state.plainTransports.flatMap((p) => p.consumers)).toEqual([]);
    const files = readdirSync(dir);
    expect(files.filter((f) => f.endsWith('.sdp'))).toEqual([]);
    // Every media file is the file of a recording the relay knows (one that started or was stopped starting).
    const known = new Set(recordings().list().map((r) => r.file));
    expect(files.filter((f) => !known.has(f))).toEqual([]);
  }

  it('DELETE and a producer closing raced against the start: 201, 404 or 409 (never 500), and nothing left behind', { timeout: 240_000 }, async () => {
    // How long a start takes here: the races are spread over it.
    const timed = Date.now();
    const first = await relay.createRecording({ routerId, producerIds: [producers.audio, producers.video] });
    const startMs = Date.now() - timed;
    await relay.stopRecording(first.id);
    console.log(`a start takes ${startMs} ms here`);

    const answers: Record<string, number> = {};
    const count = (what: string) => (answers[what] = (answers[what] ?? 0) + 1);
    const iterations = 32;
    for (let i = 0; i < iterations; i++) {
      const delayMs = Math.round((startMs * 1.2 * (i % 16)) / 15);
      const closeProducer = i % 2 === 1;
      const posted = relay.createRecording({ routerId, producerIds: [producers.audio, producers.video] }).then(
        (r) => ({ ok: r }),
        (error: unknown) => ({ error }),
      );
      if (closeProducer) {
        await sleep(delayMs);
        await relay.closeProducer(producers.video);
      } else {
        // The id as soon as the recording exists (its start is still under way then).
        let id: string | undefined;
        await waitFor(() => (id = recordings().list(routerId).find((r) => r.state !== 'stopped' && r.state !== 'failed')?.id) !== undefined, {
          timeoutMs: 5000,
          intervalMs: 2,
          what: 'the recording listed',
        });
        await sleep(delayMs);
        const stopped = await relay.stopRecording(id!);
        expect(['stopped', 'failed']).toContain(stopped.state);
      }
      const answer = await posted;
      if ('ok' in answer) {
        count('201');
        // Started before the race: it ends as a stopped recording (DELETE or producer_closed).
        await waitFor(() => !['starting', 'recording', 'stopping'].includes(recordings().get(answer.ok.id).state), { timeoutMs: 30_000, what: 'the recording ended' });
      } else {
        const error = answer.error as RelayClientError;
        expect(error, String(error)).toBeInstanceOf(RelayClientError);
        count(`${error.status} ${error.code}`);
        expect([404, 409], `${error.status} ${error.code}: ${error.message}`).toContain(error.status);
        if (error.status === 404) expect(error.details).toMatchObject({ resource: 'producer', id: producers.video });
        if (error.status === 409) expect(error.details).toMatchObject({ reason: 'ended_while_starting' });
      }
      if (closeProducer) {
        producers.video = (await relay.createProducer({ transportId: ingest.video!, kind: 'video', rtpParameters: ingestRtpParameters.video })).id;
      }
      await expectOnlyTheIngest();
    }
    console.log(`race answers over ${iterations} starts: ${JSON.stringify(answers)}`);

    // The room can still record: nothing of the races holds its caps or ports.
    await waitFor(async () => (await relay.producerStats(producers.video)).some((s) => s.type === 'inbound-rtp' && Number(s.bitrate ?? 0) > 0), { timeoutMs: 10_000, what: 'video again' });
    const after = await relay.createRecording({ routerId, producerIds: [producers.audio, producers.video] });
    expect(after.state).toBe('recording');
    await sleep(2000);
    const stopped = await relay.stopRecording(after.id);
    expect((await ffprobe(path.join(dir, stopped.file))).streams.length).toBe(2);
    await expectOnlyTheIngest();
  });

  it("ffmpeg's sockets are bound to loopback, and RTP from another address does not reach the file", { timeout: 90_000 }, async () => {
    const recording = await relay.createRecording({ routerId, producerIds: [producers.audio] });
    const file = path.join(dir, recording.file);
    const child = processes.get(recording.id)!;
    try {
      await waitFor(() => existsSync(file) && statSync(file).size > 5000, { timeoutMs: 20_000, what: 'the file growing' }).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${await situation(recording.id)}`);
      });
      const sockets = udpSocketsOf(child.pid!);
      console.log(`ffmpeg's UDP sockets: ${sockets.join(' ')}`);
      expect(sockets).toHaveLength(2); // RTP and RTCP of the one track
      for (const socket of sockets) expect(socket).toMatch(/^127\.0\.0\.1:\d+$/);

      // The relay's media paused: from here on, whatever reaches the file came from elsewhere.
      await relay.pauseProducer(producers.audio);
      await sleep(500);
      const sdp = readFileSync(path.join(dir, `${recording.id}.sdp`), 'utf8');
      const port = Number(/^m=audio (\d+) /m.exec(sdp)![1]);
      const payloadType = Number(/^m=audio \d+ RTP\/AVP (\d+)/m.exec(sdp)![1]);
      // 150 Opus packets (20 ms of CELT silence each) of another SSRC, from another loopback address.
      const foreign = createSocket('udp4');
      await new Promise<void>((resolve) => foreign.bind(0, '127.0.0.2', resolve));
      for (let i = 0; i < 150; i++) {
        const header = new RtpHeader({ payloadType, sequenceNumber: 1000 + i, timestamp: 960 * (1000 + i), ssrc: 0x5eed_0001, marker: false });
        const packet = new RtpPacket(header, Buffer.from([0xf8, 0xff, 0xfe]));
        foreign.send(packet.serialize(), port, '127.0.0.1');
        await sleep(5);
      }
      foreign.close();
      await sleep(1000);
      const state = await relay.getRouter(routerId);
      const consumerId = state.plainTransports.find((p) => (p.appData as { recordingId?: string }).recordingId === recording.id)!.consumers[0]!.id;
      const sent = Number((await relay.consumerStats(consumerId)).find((s) => s.type === 'outbound-rtp')!.packetCount);
      await relay.resumeProducer(producers.audio);
      const stopped = await relay.stopRecording(recording.id);
      expect(stopped.state).toBe('stopped');
      const counts = await packetCounts(file);
      console.log(`file: ${JSON.stringify(counts)} packets; the relay sent ${sent} before the resume`);
      // The file holds the relay's packets (sent before the pause, and some after the resume) and none of
      // the 150: before the fix it held them all. The resume adds at most the stop's few hundred ms of packets.
      expect(counts.audio).toBeLessThan(sent + 100);
      expect(await decodeErrors(file)).toBe('');
    } finally {
      await relay.resumeProducer(producers.audio).catch(() => {});
    }
    await expectOnlyTheIngest();
  });

  it('a recording started while its producers are paused waits for their media, then records both tracks', { timeout: 90_000 }, async () => {
    await relay.pauseProducer(producers.audio);
    await relay.pauseProducer(producers.video);
    try {
      const recording = await relay.createRecording({ routerId, producerIds: [producers.audio, producers.video], appData: { meeting: 'muted' } });
      expect(recording.state).toBe('recording');
      // Such a recording used to fail at ffmpeg's 10 s read timeout (an ffmpeg started on paused
      // producers gives up before anyone speaks): no ffmpeg is started while it waits, so there is
      // none to time out. Past the start's 2 s look for RTP (MEDIA_GRACE_MS), it still waits, without one.
      await sleep(3000);
      expect(processes.get(recording.id), 'an ffmpeg started before the media').toBeUndefined();
      expect(recordings().get(recording.id).state).toBe('recording');
      expect(eventsOf(recording.id).map((e) => e.type)).toEqual(['recording.started']);

      await relay.resumeProducer(producers.audio);
      await relay.resumeProducer(producers.video);
      const file = path.join(dir, recording.file);
      await waitFor(() => existsSync(file) && statSync(file).size > 50_000, { timeoutMs: 20_000, what: 'the file growing once media flows' }).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${await situation(recording.id)}`);
      });
      await sleep(3000);
      const stopped = await relay.stopRecording(recording.id);
      expect(stopped).toMatchObject({ state: 'stopped', reason: 'api' });
      expect(eventsOf(recording.id).map((e) => e.type)).toEqual(['recording.started', 'recording.stopped']);
      const probe = await ffprobe(file);
      expect(probe.streams.map((s) => [s.codec_type, s.codec_name]).sort()).toEqual([
        ['audio', 'opus'],
        ['video', 'vp8'],
      ]);
      expect(probe.durationS).toBeGreaterThan(2);
      expect(await decodeErrors(file)).toBe('');
    } finally {
      await relay.resumeProducer(producers.audio).catch(() => {});
      await relay.resumeProducer(producers.video).catch(() => {});
    }

    // Stopped before any media flowed: no ffmpeg was started, no file, stopped at once.
    await relay.pauseProducer(producers.audio);
    try {
      const silent = await relay.createRecording({ routerId, producerIds: [producers.audio] });
      await sleep(1000);
      expect(processes.get(silent.id)).toBeUndefined();
      const stopped = await relay.stopRecording(silent.id);
      expect(stopped).toMatchObject({ state: 'stopped', reason: 'api', bytes: 0 });
      expect(existsSync(path.join(dir, silent.file))).toBe(false);
    } finally {
      await relay.resumeProducer(producers.audio).catch(() => {});
    }
    await expectOnlyTheIngest();
  });
});
