// The relay's recordings: one ffmpeg per recording, fed over loopback plain transports (one per
// track, RTCP on a port of its own as ffmpeg expects) with an SDP written for it, copying the streams
// into RECORDINGS_DIR/<id>.<ext>. The order that gives a playable file (checked by hand with mediasoup
// 3.11 and Debian's ffmpeg 5.1): consumers made paused, ffmpeg started and holding its ports, then the
// consumers resumed and key frames requested. A stop ends ffmpeg within STOP_TIMEOUT_MS whether RTP
// flows or not (ffmpeg-stop.ts); a watchdog ends it when the relay dies (ffmpeg-watchdog.ts); a
// manifest beside the file (manifest.ts) lets the next start finish what a dead relay left (recovery.ts).
// An ffmpeg that stops
// writing while its RTP still comes (hung, stopped, stuck on its disk) is reaped after RECORDINGS_STALL_S:
// ffmpeg writes each packet through (-flush_packets 1; by default a WebM's clusters sat in its buffer
// for many seconds, and a quiet Ogg's pages longer still), so a live recording's file grows every second.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdir, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import { formatTime } from '../../time.js';
import { RECORDABLE_MIME_TYPES, type CreateRecordingBody, type recordingSchema, type recordingStopReason } from '../contract/recordings.js';
import type { RelayEvent } from '../contract/events.js';
import { notFound, RelayError, validationError } from '../errors.js';
import type { RelayBus } from '../events/index.js';
import type { MediaService } from '../media-service.js';
import { finalise, stopFfmpeg } from './ffmpeg-stop.js';
import { createFfmpegWatchdog } from './ffmpeg-watchdog.js';
import { createManifests, type Manifest } from './manifest.js';
import { MEDIA_GRACE_MS, mediaFlowingWithin, waitForMedia } from './media-wait.js';
import { recoverUnfinished, type RecoveryOutcome } from './recovery.js';
import { recordingAddresses } from './rtp-source.js';
import { mediaCodecOf, recordingSdp } from './sdp.js';
import { endedWhileStarting, startRefusal, stillStarting } from './start-race.js';
import { createUploader, UploadInterrupted, type Uploader, type UploaderOptions } from './upload.js';

export type StopReason = z.infer<typeof recordingStopReason>;
export type RecordingView = z.output<typeof recordingSchema>;
type Format = RecordingView['format'];

/** How long a stop lets ffmpeg take in all before it is killed (ffmpeg-stop.ts): well within the 4 s of a shutdown. */
export const STOP_TIMEOUT_MS = 2_000;
/** How long a stop lets ffmpeg finish on its own (it does at once while RTP flows) before breaking its read. */
const STOP_GRACE_MS = 1_000;
/** How long finishing the container of a file ffmpeg could not finish may take. */
const FINALISE_TIMEOUT_MS = 60_000;
/** Within a shutdown's 4 s, all of a stop (ffmpeg-stop.ts): grace, kill and finishing the container. */
const SHUTDOWN_STOP = { graceMs: 500, killAfterMs: 1_500, finaliseMs: 1_500 };
/** How long ffmpeg may take to read its SDP and open its ports. */
const LISTEN_TIMEOUT_MS = 10_000;
/** Key frames asked for after the resume (ms): the first may cross ffmpeg's start. */
const KEY_FRAME_DELAYS_MS = [0, 1000, 3000];
/** How often a recording's file and its consumers' RTP are looked at for a stall. */
const STALL_CHECK_MS = 1000;
/** Only ids the relay made reach a path: a UUID. */
const RECORDING_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface RecordingsDeps {
  media: MediaService;
  bus: RelayBus;
  config: Config['recordings'];
  logger: Logger;
  /** The ffmpeg to run (default `ffmpeg` on PATH). */
  ffmpegPath?: string;
  stopTimeoutMs?: number;
  /** Retry timing of the uploads (tests shorten it). */
  upload?: UploaderOptions;
  /** MEDIASOUP_PLAIN_LISTEN_IP: where ffmpeg listens and whose RTP it takes follow from it (rtp-source.ts). */
  plainListenIp?: string;
}

interface Track {
  kind: 'audio' | 'video';
  producerId: string;
  port: number;
  plainTransportId?: string;
  consumerId?: string;
  rtpParameters?: ms.RtpParameters;
}

interface Recording {
  readonly id: string;
  readonly routerId: string;
  readonly producerIds: string[];
  readonly appData: Record<string, unknown>;
  readonly format: Format;
  readonly file: string;
  readonly startedAt: Date;
  state: RecordingView['state'];
  reason?: StopReason;
  error?: string;
  bytes?: number;
  durationMs?: number;
  upload?: RecordingView['upload'];
  key?: string;
  readonly tracks: Track[];
  process?: ChildProcess;
  exited?: Promise<void>;
  /** Set once ffmpeg has exited or could not be spawned at all (no exit code then). */
  gone?: boolean;
  ending?: Promise<void>;
  /** Its max-duration timer and key-frame requests: cleared on release. */
  timers: NodeJS.Timeout[];
  /** The next stall check (watchForStall): cleared on release. */
  stallCheck?: NodeJS.Timeout;
  stderr: string;
  /** Resolves once its start has settled and released whatever a race left (start-race.ts). */
  settled?: Promise<void>;
}

export interface Recordings {
  start(input: CreateRecordingBody): Promise<RecordingView>;
  get(id: string): RecordingView;
  list(routerId?: string): RecordingView[];
  /** Stops it (API); resolves once the file is finalised. */
  stop(id: string): Promise<RecordingView>;
  /** Stops every recording under way (shutdown, the end of a drain): their files are finalised. */
  stopAll(reason: StopReason): Promise<void>;
  /** Recordings starting or under way. */
  active(): number;
  /** Ends the uploads under way (after stopAll, on shutdown; their files stay and the next start resumes them) and the ffmpeg watchdog. */
  close(): void;
  /** The ffmpeg process of a recording, for the tests that kill it. */
  processForTesting(id: string): ChildProcess | undefined;
}

const FORMATS: Record<Format, { muxer: string; ext: string; contentType: string }> = {
  webm: { muxer: 'webm', ext: 'webm', contentType: 'video/webm' },
  mkv: { muxer: 'matroska', ext: 'mkv', contentType: 'video/x-matroska' },
  ogg: { muxer: 'ogg', ext: 'ogg', contentType: 'audio/ogg' },
};

export function createRecordings(deps: RecordingsDeps): Recordings {
  const { media, bus, config, logger } = deps;
  const ffmpeg = deps.ffmpegPath ?? 'ffmpeg';
  const stopTimeoutMs = deps.stopTimeoutMs ?? STOP_TIMEOUT_MS;
  const dir = path.resolve(config.dir);
  const recordings = new Map<string, Recording>();
  /** Loopback ports handed to a recording's ffmpeg and not yet given back. */
  const portsInUse = new Set<number>();
  const uploader: Uploader | undefined = config.s3 ? createUploader(config.s3, logger, deps.upload) : undefined;
  const manifests = createManifests(dir);
  const watchdog = createFfmpegWatchdog(logger);
  const closing = new AbortController();
  const addresses = recordingAddresses(deps.plainListenIp ?? '127.0.0.1');

  const isActive = (r: Recording) => r.state === 'starting' || r.state === 'recording' || r.state === 'stopping';

  /** The file's path; refuses anything but an id the relay made (ids never reach a path unchecked). */
  function pathOf(id: string, ext: string): string {
    if (!RECORDING_ID.test(id)) throw new Error(`not a recording id: ${id}`);
    const file = path.resolve(dir, `${id}.${ext}`);
    if (path.dirname(file) !== dir) throw new Error('recording path outside RECORDINGS_DIR');
    return file;
  }

  function view(r: Recording): RecordingView {
    return {
      id: r.id,
      routerId: r.routerId,
      producerIds: [...r.producerIds],
      state: r.state,
      startedAt: formatTime(r.startedAt),
      format: r.format,
      file: r.file,
      appData: r.appData,
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.error ? { error: r.error } : {}),
      ...(r.bytes === undefined ? {} : { bytes: r.bytes }),
      ...(r.durationMs === undefined ? {} : { durationMs: r.durationMs }),
      ...(r.upload ? { upload: r.upload } : {}),
      ...(r.key ? { key: r.key } : {}),
    };
  }

  function require(id: string): Recording {
    const r = recordings.get(id);
    if (!r) throw notFound('recording', id);
    return r;
  }

  /** Keeps the last RECORDINGS_MAX × 4 ended recordings for GET; older ones are forgotten. */
  function trim(): void {
    const ended = [...recordings.values()].filter((r) => !isActive(r));
    for (const r of ended.slice(0, Math.max(0, ended.length - config.max * 4))) recordings.delete(r.id);
  }

  /** Closes the recording's plain transports (they take its consumers with them): no more RTP or RTCP to its ffmpeg. */
  function closeTransports(r: Recording): void {
    for (const track of r.tracks) {
      if (track.plainTransportId) {
        try {
          media.closePlainTransport(track.plainTransportId);
        } catch {
          // Gone already (router closed, worker died).
        }
      }
    }
  }

  /** Closes what a recording holds in the relay and gives its ports back. */
  function release(r: Recording): Promise<void> {
    for (const timer of r.timers) clearTimeout(timer);
    r.timers = [];
    clearTimeout(r.stallCheck);
    closeTransports(r);
    for (const track of r.tracks) {
      portsInUse.delete(track.port);
      portsInUse.delete(track.port + 1);
    }
    return rm(pathOf(r.id, 'sdp'), { force: true }).catch(() => {});
  }

  async function fileSize(r: Recording): Promise<number> {
    return stat(pathOf(r.id, FORMATS[r.format].ext)).then(
      (s) => s.size,
      () => 0,
    );
  }

  function fail(r: Recording, error: string): void {
    if (!isActive(r) && r.state !== 'starting') return;
    r.state = 'failed';
    r.error = error;
    const child = r.process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    void release(r);
    r.durationMs = Date.now() - r.startedAt.getTime();
    logger.error({ recordingId: r.id, routerId: r.routerId, error, stderr: r.stderr.slice(-2000) }, 'recording failed');
    bus.publish({ type: 'recording.failed', recordingId: r.id, routerId: r.routerId, error, appData: r.appData });
    void manifests.remove(r.id).catch(() => {});
    void fileSize(r).then((bytes) => (r.bytes = bytes));
    trim();
  }

  function end(r: Recording, reason: StopReason): Promise<void> {
    if (r.ending) return r.ending;
    if (r.state !== 'recording' && r.state !== 'starting') return Promise.resolve();
    r.state = 'stopping';
    r.ending = (async () => {
      const child = r.process;
      /** A shutdown left the container unfinished: the next start finishes it (then uploads it). */
      let unfinished = false;
      if (child && !r.gone && child.exitCode === null && child.signalCode === null) {
        // Within its bound whether RTP flows or not (ffmpeg-stop.ts); a file ffmpeg could not finish is
        // copied into a finished container.
        const shutdown = reason === 'shutdown';
        const timings = shutdown ? { graceMs: SHUTDOWN_STOP.graceMs, killAfterMs: Math.min(stopTimeoutMs, SHUTDOWN_STOP.killAfterMs) } : { graceMs: Math.min(STOP_GRACE_MS, stopTimeoutMs / 2), killAfterMs: stopTimeoutMs };
        const outcome = await stopFfmpeg(child, r.exited!, timings, {
          onKill: () => logger.warn({ recordingId: r.id, stopTimeoutMs: timings.killAfterMs }, 'ffmpeg did not finish the recording in time; killed'),
        });
        if (outcome === 'interrupted' || outcome === 'killed') {
          await finalise(ffmpeg, pathOf(r.id, FORMATS[r.format].ext), FORMATS[r.format].muxer, { timeoutMs: shutdown ? SHUTDOWN_STOP.finaliseMs : FINALISE_TIMEOUT_MS }).catch((error: unknown) => {
            unfinished = shutdown;
            const message = error instanceof Error ? error.message : String(error);
            if (shutdown) logger.warn({ recordingId: r.id, error: message }, 'the recording\'s container is finished at the next start (playable meanwhile, without its duration and index)');
            else logger.warn({ recordingId: r.id, error: message }, 'the recording is kept as ffmpeg left it (playable, without its duration and index)');
          });
        }
      }
      await release(r);
      const durationMs = Date.now() - r.startedAt.getTime();
      const bytes = await fileSize(r);
      // The manifest first: once the recording reads `stopped`, its manifest says what is left to do.
      const owed = !unfinished && uploader !== undefined && bytes > 0;
      if (unfinished) {
        await manifests.save({ ...manifestOf(r), state: 'stopped', unfinished: true, bytes, durationMs }).catch((error: unknown) => logger.error({ err: error, recordingId: r.id }, 'recording manifest not written'));
      } else if (owed) {
        // The upload is owed before it starts: a relay stopped meanwhile resumes it at its next start.
        await manifests.save({ ...manifestOf(r), state: 'stopped', bytes, durationMs }).catch((error: unknown) => logger.error({ err: error, recordingId: r.id }, 'recording manifest not written'));
      } else {
        // Nothing owed: no upload, or a recording stopped before its media ever flowed (no file).
        await manifests.remove(r.id).catch(() => {});
      }
      r.state = 'stopped';
      r.reason = reason;
      r.durationMs = durationMs;
      r.bytes = bytes;
      logger.info({ recordingId: r.id, routerId: r.routerId, reason, bytes: r.bytes, durationMs: r.durationMs }, 'recording stopped');
      bus.publish({ type: 'recording.stopped', recordingId: r.id, routerId: r.routerId, reason, file: r.file, bytes: r.bytes, durationMs: r.durationMs, appData: r.appData });
      if (unfinished && uploader) logger.info({ recordingId: r.id }, 'recording upload deferred to the next start, once its container is finished');
      if (owed) upload(uploader, r);
      trim();
    })();
    return r.ending;
  }

  /** Uploads a finished file in the background: recording.uploaded, or recording.failed after the last retry. */
  function upload(to: Uploader, r: Recording): void {
    r.upload = 'pending';
    const key = r.file;
    logger.info({ recordingId: r.id, key }, 'recording upload started');
    to.upload(pathOf(r.id, FORMATS[r.format].ext), key, FORMATS[r.format].contentType).then(
      (bytes) => {
        r.upload = 'uploaded';
        r.key = key;
        void manifests.remove(r.id).catch(() => {});
        logger.info({ recordingId: r.id, key, bytes }, 'recording uploaded');
        bus.publish({ type: 'recording.uploaded', recordingId: r.id, routerId: r.routerId, key, bytes, appData: r.appData });
      },
      (error: unknown) => {
        if (error instanceof UploadInterrupted) {
          // Not a failure: the manifest stays, the next start uploads it.
          logger.warn({ recordingId: r.id, key }, 'recording upload interrupted by the shutdown; the next start resumes it');
          return;
        }
        r.upload = 'failed';
        void manifests.remove(r.id).catch(() => {});
        const message = error instanceof Error ? error.message : String(error);
        logger.error({ recordingId: r.id, key, error: message }, 'recording upload failed; the file stays in RECORDINGS_DIR');
        bus.publish({ type: 'recording.failed', recordingId: r.id, routerId: r.routerId, error: message, appData: r.appData });
      },
    );
  }

  /** RTP packets the recording's consumers have sent to ffmpeg so far (undefined when a consumer is gone). */
  async function packetsSent(r: Recording): Promise<number | undefined> {
    let sum = 0;
    for (const track of r.tracks) {
      const stats = await media.getStats('consumer', track.consumerId!).catch(() => undefined);
      if (!stats) return undefined;
      for (const entry of stats as { type?: string; packetCount?: number }[]) if (entry.type === 'outbound-rtp') sum += entry.packetCount ?? 0;
    }
    return sum;
  }

  /**
   * Reaps a hung ffmpeg: a file that has not grown for RECORDINGS_STALL_S while RTP kept coming to it.
   * Without RTP (producers paused) a still file is no stall: the clock runs only from the first check
   * that saw packets sent and no growth.
   */
  function watchForStall(r: Recording): void {
    const stallMs = config.stallS * 1000;
    let bytes = -1;
    let sent: number | undefined;
    let stalledSince: number | undefined;
    const check = async (): Promise<void> => {
      const [nowBytes, nowSent] = await Promise.all([fileSize(r), packetsSent(r)]);
      if (r.state !== 'recording') return;
      const now = Date.now();
      if (nowBytes !== bytes) stalledSince = undefined;
      else if (nowSent !== undefined && sent !== undefined && nowSent > sent) stalledSince ??= now - STALL_CHECK_MS;
      bytes = nowBytes;
      sent = nowSent;
      if (stalledSince !== undefined && now - stalledSince >= stallMs) {
        fail(r, `ffmpeg stopped writing: ${r.file} stayed at ${bytes} bytes for ${Math.round((now - stalledSince) / 1000)} s while RTP kept coming (killed; the partial file is kept)`);
        return;
      }
      r.stallCheck = setTimeout(() => void check(), STALL_CHECK_MS);
    };
    r.stallCheck = setTimeout(() => void check(), STALL_CHECK_MS);
  }

  /** What a close elsewhere in the relay means for the recordings: the bus tells it, as it tells every sink. */
  function onEvent(event: RelayEvent): void {
    for (const r of recordings.values()) {
      if (!isActive(r) || r.state === 'stopping') continue;
      const ownTransport = (id: string) => r.tracks.some((t) => t.plainTransportId === id);
      const ownConsumer = (id: string) => r.tracks.some((t) => t.consumerId === id);
      let outcome: StopReason | { error: string } | undefined;
      const byReason = (reason: string, fallback: StopReason | { error: string }): StopReason | { error: string } =>
        reason === 'shutdown' ? 'shutdown' : reason === 'router_closed' ? 'router_closed' : reason === 'worker_died' ? { error: 'the media worker holding it died' } : fallback;
      if (event.type === 'router.closed' && event.routerId === r.routerId) outcome = byReason(event.reason, 'router_closed');
      else if (event.type === 'producer.closed' && r.producerIds.includes(event.producerId)) {
        // Closed with its transport: the room may be closing (the router's events come after its
        // transports'), so the recording's own consumer and plain transport events decide.
        if (event.reason === 'transport_closed') continue;
        outcome = byReason(event.reason, 'producer_closed');
      }
      else if (event.type === 'consumer.closed' && ownConsumer(event.consumerId)) {
        // Its plain transport closing took it along: that transport's own event, next, says why (the API,
        // the room closing, the worker). Taken as a failure here, a room's close failed its recordings.
        if (event.reason === 'transport_closed') continue;
        outcome = byReason(event.reason, event.reason === 'producer_closed' ? 'producer_closed' : { error: `its consumer closed (${event.reason})` });
      } else if (event.type === 'plainTransport.closed' && ownTransport(event.plainTransportId)) {
        outcome = byReason(event.reason, { error: `its plain transport closed (${event.reason})` });
      }
      if (outcome === undefined) continue;
      if (typeof outcome === 'string') void end(r, outcome);
      else fail(r, outcome.error);
    }
  }
  bus.listen(onEvent);

  async function checkStorage(): Promise<void> {
    await mkdir(dir, { recursive: true });
    const fs = await statfs(dir);
    const freeMb = Math.floor((fs.bavail * fs.bsize) / 1024 / 1024);
    if (freeMb < config.minFreeMb) {
      throw new RelayError('RECORDING_STORAGE_FULL', `RECORDINGS_DIR has ${freeMb} MB free, less than RECORDINGS_MIN_FREE_MB (${config.minFreeMb})`, {
        freeMb,
        minFreeMb: config.minFreeMb,
      });
    }
  }

  /** A port p of loopback with p + 1 free too (RTP and RTCP of one track), not handed to another recording. */
  async function freePortPair(): Promise<number> {
    for (let attempt = 0; attempt < 32; attempt++) {
      const first = await bindUdp(addresses.listen, 0);
      const port = (first.address()).port;
      const second = port < 65535 && !portsInUse.has(port) && !portsInUse.has(port + 1) ? await bindUdp(addresses.listen, port + 1).catch(() => undefined) : undefined;
      first.close();
      second?.close();
      if (second) {
        portsInUse.add(port);
        portsInUse.add(port + 1);
        return port;
      }
    }
    throw new RelayError('MEDIASOUP_ERROR', 'no free loopback port pair for a recording');
  }

  function plan(input: CreateRecordingBody): { tracks: Track[]; format: Format } {
    const { routerId, producerIds } = input;
    media.getRouter(routerId);
    if (new Set(producerIds).size !== producerIds.length) throw validationError([{ path: 'producerIds', message: 'names a producer twice' }]);
    const tracks: Track[] = [];
    let video: string | undefined;
    for (const [index, producerId] of producerIds.entries()) {
      const entry = media.getProducer(producerId);
      if (entry.routerId !== routerId) throw validationError([{ path: `producerIds.${index}`, message: 'a producer of another router' }]);
      const { kind } = entry.producer;
      if (tracks.some((t) => t.kind === kind)) throw validationError([{ path: `producerIds.${index}`, message: `a second ${kind} producer: one audio and one video at most` }]);
      const mimeType = mediaCodecOf(entry.producer.rtpParameters).mimeType;
      const known = RECORDABLE_MIME_TYPES.find((m) => m.toLowerCase() === mimeType.toLowerCase());
      if (!known) throw validationError([{ path: `producerIds.${index}`, message: `${mimeType} is not recorded (${RECORDABLE_MIME_TYPES.join(', ')})` }]);
      if (kind === 'video') video = known;
      tracks.push({ kind, producerId, port: 0 });
    }
    const format: Format = video === undefined ? 'ogg' : video === 'video/H264' ? 'mkv' : 'webm';
    return { tracks, format };
  }

  async function start(input: CreateRecordingBody): Promise<RecordingView> {
    const { tracks, format } = plan(input);
    const open = [...recordings.values()].filter(isActive).length;
    if (open >= config.max) throw new RelayError('RECORDING_CAPACITY_EXCEEDED', `${config.max} recordings are under way (RECORDINGS_MAX)`, { max: config.max });
    const id = randomUUID();
    const ext = FORMATS[format].ext;
    const r: Recording = {
      id,
      routerId: input.routerId,
      producerIds: [...input.producerIds],
      appData: input.appData ?? {},
      format,
      file: `${id}.${ext}`,
      startedAt: new Date(),
      state: 'starting',
      tracks,
      timers: [],
      stderr: '',
    };
    // Counted against RECORDINGS_MAX from here, before anything is awaited.
    recordings.set(id, r);
    const setup = (async () => {
      await checkStorage();
      stillStarting(r);
      await setUp(r);
    })();
    let settle!: () => void;
    r.settled = new Promise<void>((resolve) => (settle = resolve));
    try {
      await setup;
    } catch (error) {
      const refusal = startRefusal(media, r, error);
      await abandon(r);
      throw refusal;
    } finally {
      settle();
    }
    return view(r);
  }

  /**
   * After a setup that failed or was overtaken (start-race.ts): the setup has settled, so it makes
   * nothing more, and everything it made is on the recording; released here whatever the race.
   */
  async function abandon(r: Recording): Promise<void> {
    const child = r.process;
    if (r.state === 'starting') {
      // Its own failure: it never started, and is forgotten (the POST answers why).
      r.state = 'failed';
      recordings.delete(r.id);
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // Never answered 201: nothing for the next start to recover.
      await manifests.remove(r.id).catch(() => {});
    } else {
      // Ended meanwhile (DELETE, shutdown, a producer or the room closing, a failure): let that end finish.
      await r.ending;
    }
    await release(r);
  }

  async function setUp(r: Recording): Promise<void> {
    const ops = media;
    const router = ops.getRouter(r.routerId).entry.router;
    const rtpCapabilities = recordingCapabilities(router.rtpCapabilities);
    // Each resource goes onto the recording as soon as it exists, and the start checks after every await
    // that it still starts: what a race leaves is released once the setup has settled (abandon()).
    for (const track of r.tracks) {
      track.port = await freePortPair();
      stillStarting(r);
      const plain = await ops.createPlainTransport({ routerId: r.routerId, rtcpMux: false, comedia: false, appData: { recordingId: r.id } });
      track.plainTransportId = plain.plainTransport.id;
      stillStarting(r);
      await ops.connectPlainTransport(plain.plainTransport.id, { ip: addresses.listen, port: track.port, rtcpPort: track.port + 1 });
      stillStarting(r);
      const consumer = await ops.createConsumer({
        transportId: plain.plainTransport.id,
        producerId: track.producerId,
        rtpCapabilities: rtpCapabilities as never,
        appData: { recordingId: r.id },
      });
      track.consumerId = consumer.consumer.id;
      track.rtpParameters = consumer.consumer.rtpParameters;
      stillStarting(r);
    }
    await writeFile(pathOf(r.id, 'sdp'), recordingSdp(r.tracks.map((t) => ({ kind: t.kind, port: t.port, rtpParameters: t.rtpParameters! })), addresses), { mode: 0o600 });
    stillStarting(r);
    // Media flowing already (the usual case): ffmpeg is listening before the answer, so the file holds
    // everything from then on. Otherwise (everyone muted) the recording waits for it (media-wait.ts).
    const flowing = await mediaFlowingWithin(ops, r.producerIds, MEDIA_GRACE_MS, () => r.state === 'starting');
    stillStarting(r);
    if (flowing) await launch(r, () => r.state === 'starting');
    stillStarting(r);
    r.timers.push(setTimeout(() => void end(r, 'max_duration'), config.maxDurationS * 1000));
    r.state = 'recording';
    if (r.process) watchForStall(r);
    else void launchOnceMediaFlows(r);
    logger.info({ recordingId: r.id, routerId: r.routerId, producerIds: r.producerIds, file: r.file, waitingForMedia: !r.process }, 'recording started');
    bus.publish({ type: 'recording.started', recordingId: r.id, routerId: r.routerId, producerIds: [...r.producerIds], appData: r.appData });
  }

  /** A recording that started without media: ffmpeg once every producer sends; the stall watch from then on. */
  async function launchOnceMediaFlows(r: Recording): Promise<void> {
    const recording = () => r.state === 'recording';
    try {
      if (!(await waitForMedia(media, r.producerIds, () => recording() && !r.process))) return;
      await launch(r, recording);
      watchForStall(r);
      logger.info({ recordingId: r.id, routerId: r.routerId }, 'recording: media flows, ffmpeg started');
    } catch (error) {
      if (!recording()) return;
      // A producer gone while it waited: the recording ends as when a producer closes.
      if (error instanceof RelayError && error.code === 'NOT_FOUND') void end(r, 'producer_closed');
      else fail(r, `ffmpeg could not start once media flowed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** ffmpeg started and listening, then the consumers resumed and key frames asked for; `alive` false stops it with the 409. */
  async function launch(r: Recording, alive: () => boolean): Promise<void> {
    const ops = media;
    const sdpPath = pathOf(r.id, 'sdp');
    const output = pathOf(r.id, FORMATS[r.format].ext);
    const child = spawn(
      ffmpeg,
      // -localaddr: its sockets on the loopback address only; the SDP's source filter takes RTP from the relay's address only (rtp-source.ts).
      ['-nostdin', '-hide_banner', '-loglevel', 'error', '-protocol_whitelist', 'file,udp,rtp', '-localaddr', addresses.listen, '-fflags', '+genpts', '-analyzeduration', '1000000', '-i', sdpPath, '-map', '0', '-c', 'copy', '-flush_packets', '1', '-f', FORMATS[r.format].muxer, '-y', output],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    r.process = child;
    // Stopped by the watchdog if the relay dies without stopping it.
    const { pid } = child;
    if (pid) {
      watchdog.watch(pid);
      child.once('exit', () => watchdog.unwatch(pid));
    }
    child.stderr.on('data', (chunk: Buffer) => (r.stderr = (r.stderr + chunk.toString()).slice(-8192)));
    r.exited = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        r.stderr += `\n${error.message}`;
        r.gone = true;
        resolve();
      });
      child.once('exit', () => {
        r.gone = true;
        resolve();
      });
    });
    void r.exited.then(() => {
      if (r.state === 'recording' || r.state === 'starting') {
        const how = child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
        fail(r, `ffmpeg exited (${how})${r.stderr.trim() ? `: ${r.stderr.trim().split('\n').at(-1)!.slice(0, 300)}` : ''}`);
      }
    });
    // From here a file is being written: its manifest lets the next start recover it after a crash.
    if (isActive(r)) await manifests.save({ ...manifestOf(r), state: 'recording', ...(pid ? { pid } : {}) }).catch((error: unknown) => logger.error({ err: error, recordingId: r.id }, 'recording manifest not written: a crash would leave this recording unrecovered'));
    await waitListening(r, child, alive);
    for (const track of r.tracks) {
      await ops.resumeConsumer(track.consumerId!);
      if (!alive()) throw endedWhileStarting(r);
    }
    const video = r.tracks.find((t) => t.kind === 'video');
    if (video) {
      for (const delay of KEY_FRAME_DELAYS_MS) {
        r.timers.push(setTimeout(() => void ops.requestConsumerKeyFrame(video.consumerId!).catch(() => {}), delay));
      }
    }
  }

  /** A video producer resumed mid-recording: a key frame at once, so the file does not wait for the sender's next one. */
  function keyFrameOnResume(event: RelayEvent): void {
    if (event.type !== 'producer.resumed') return;
    for (const r of recordings.values()) {
      if (r.state !== 'recording' || !r.process) continue;
      const track = r.tracks.find((t) => t.kind === 'video' && t.producerId === event.producerId);
      if (track?.consumerId) void media.requestConsumerKeyFrame(track.consumerId).catch(() => {});
    }
  }
  bus.listen(keyFrameOnResume);

  /** ffmpeg holds a port once it has read the SDP: a bind of it then fails. */
  async function waitListening(r: Recording, child: ChildProcess, alive: () => boolean): Promise<void> {
    const deadline = Date.now() + LISTEN_TIMEOUT_MS;
    for (;;) {
      // Stopped meanwhile (its ffmpeg then exits on the stop's SIGINT): that, not ffmpeg, is the answer.
      if (r.state === 'stopping' || r.state === 'stopped') throw endedWhileStarting(r);
      if (r.gone || child.exitCode !== null || child.signalCode !== null) {
        throw new RelayError('CONFLICT', `ffmpeg could not start the recording: ${r.stderr.trim().slice(-300) || 'it exited'}`, { reason: 'ffmpeg' });
      }
      if (!alive()) throw endedWhileStarting(r);
      const held = await Promise.all(r.tracks.map((t) => portHeld(addresses.listen, t.port)));
      if (held.every(Boolean)) return;
      if (Date.now() > deadline) throw new RelayError('MEDIASOUP_ERROR', 'ffmpeg did not open its ports in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  function manifestOf(r: Recording): Omit<Manifest, 'state'> {
    return { version: 1, id: r.id, routerId: r.routerId, producerIds: r.producerIds, appData: r.appData, format: r.format, file: r.file, startedAt: r.startedAt.toISOString(), relayPid: process.pid };
  }

  /** A recording an earlier run left unfinished (recovery.ts), listed and reported as this run's. */
  async function adopt(m: Manifest, outcome: RecoveryOutcome): Promise<void> {
    const r: Recording = {
      id: m.id,
      routerId: m.routerId,
      producerIds: m.producerIds,
      appData: m.appData,
      format: m.format,
      file: m.file,
      startedAt: new Date(m.startedAt),
      state: outcome.state === 'failed' ? 'failed' : 'stopped',
      tracks: [],
      timers: [],
      stderr: '',
    };
    recordings.set(r.id, r);
    if (outcome.state === 'failed') {
      r.error = outcome.error;
      await manifests.remove(r.id).catch(() => {});
      logger.error({ recordingId: r.id, error: outcome.error }, 'recording of an earlier run not recovered');
      bus.publish({ type: 'recording.failed', recordingId: r.id, routerId: r.routerId, error: outcome.error, appData: r.appData });
    } else {
      r.bytes = outcome.bytes;
      if (m.durationMs !== undefined) r.durationMs = m.durationMs;
      if (outcome.state === 'recovered') {
        logger.warn({ recordingId: r.id, file: r.file, bytes: r.bytes }, 'recording of an earlier run recovered');
        bus.publish({ type: 'recording.recovered', recordingId: r.id, routerId: r.routerId, file: r.file, bytes: outcome.bytes, appData: r.appData });
      }
      if (uploader) {
        await manifests.save({ ...manifestOf(r), state: 'stopped', bytes: outcome.bytes, ...(r.durationMs === undefined ? {} : { durationMs: r.durationMs }) });
        upload(uploader, r);
      } else {
        if (outcome.state === 'upload' && !m.unfinished) logger.warn({ recordingId: r.id, file: r.file }, 'an upload of an earlier run is not resumed: RECORDINGS_S3_BUCKET is not set; the file stays');
        await manifests.remove(r.id).catch(() => {});
      }
    }
    trim();
  }

  void recoverUnfinished({
    dir,
    ffmpeg,
    manifests,
    logger,
    muxerOf: (format) => FORMATS[format].muxer,
    isOwn: (id) => recordings.has(id),
    settle: adopt,
    signal: closing.signal,
  }).catch((error: unknown) => logger.error({ err: error }, 'the recordings of an earlier run could not be recovered'));

  return {
    start,
    get: (id) => view(require(id)),
    list: (routerId) => [...recordings.values()].filter((r) => routerId === undefined || r.routerId === routerId).map(view),
    async stop(id) {
      const r = require(id);
      await end(r, 'api');
      // Stopped while it started: answered once the start has released what it made.
      await r.settled;
      return view(r);
    },
    async stopAll(reason) {
      await Promise.all([...recordings.values()].filter(isActive).map((r) => end(r, reason)));
    },
    active: () => [...recordings.values()].filter(isActive).length,
    close: () => {
      closing.abort();
      uploader?.close();
      watchdog.close();
    },
    processForTesting: (id) => recordings.get(id)?.process,
  };
}

/**
 * What a recording's consumer may use: the router's codecs without RTX (ffmpeg's SDP input would see
 * another payload type) and no header extensions (ffmpeg reads none of them).
 */
function recordingCapabilities(caps: ms.RtpCapabilities): ms.RtpCapabilities {
  return {
    codecs: (caps.codecs ?? []).filter((c) => !/\/rtx$/i.test(c.mimeType)).map((c) => ({ ...c, rtcpFeedback: [] })),
    headerExtensions: [],
  };
}

function bindUdp(address: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
    socket.once('error', (error) => {
      socket.close();
      reject(error);
    });
    socket.bind(port, address, () => resolve(socket));
  });
}

async function portHeld(address: string, port: number): Promise<boolean> {
  try {
    (await bindUdp(address, port)).close();
    return false;
  } catch {
    return true;
  }
}
