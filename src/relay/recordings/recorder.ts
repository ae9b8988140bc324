// The relay's recordings: one ffmpeg each, fed over loopback plain transports (one per track, RTCP on a
// port of its own as ffmpeg expects) with an SDP written for it, copying the streams into
// RECORDINGS_DIR/<id>.<ext>. The order that gives a playable file (checked by hand with mediasoup 3.11
// and Debian's ffmpeg 5.1): consumers made paused (setup.ts), ffmpeg started and holding its ports
// (ffmpeg-process.ts), then the consumers resumed and key frames requested. A stop ends ffmpeg within
// STOP_TIMEOUT_MS whether RTP flows or not (ffmpeg-stop.ts); a watchdog ends it when the relay dies
// (ffmpeg-watchdog.ts); an ffmpeg that stops writing while its RTP still comes is reaped after
// RECORDINGS_STALL_S (stall-watch.ts); a manifest beside the file (manifest.ts) lets the next start
// finish what a dead relay left (recovery.ts). This file holds the recordings and their states: what a
// start, a stop, a failure and a close elsewhere in the relay do to them.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import type { CreateRecordingBody } from '../contract/recordings.js';
import type { RelayEvent } from '../contract/events.js';
import { notFound, RelayError } from '../errors.js';
import type { RelayBus } from '../events/index.js';
import type { MediaService } from '../media-service.js';
import { adopted, settleAdopted } from './adopt.js';
import { closeOutcome } from './closes.js';
import { createEnding } from './ending.js';
import { exitError, spawnFfmpeg, waitListening } from './ffmpeg-process.js';
import { STOP_TIMEOUT_MS } from './ffmpeg-stop.js';
import { createFfmpegWatchdog } from './ffmpeg-watchdog.js';
import { createManifests, type Manifest } from './manifest.js';
import { MEDIA_GRACE_MS, mediaFlowingWithin, waitForMedia } from './media-wait.js';
import { createPortPairs } from './ports.js';
import { FORMATS, isActive, manifestOf, newRecording, recordingFiles, type Recording, type RecordingView, type StopReason } from './recording.js';
import { recoverUnfinished, type RecoveryOutcome } from './recovery.js';
import { recordingAddresses } from './rtp-source.js';
import { checkStorage, connectTracks, plan } from './setup.js';
import { watchForStall } from './stall-watch.js';
import { endedWhileStarting, startRefusal, stillStarting } from './start-race.js';
import { createUploader, type Uploader, type UploaderOptions } from './upload.js';
import { view } from './views.js';

export type { RecordingView, StopReason } from './recording.js';

/** Key frames asked for after the resume (ms): the first may cross ffmpeg's start. */
const KEY_FRAME_DELAYS_MS = [0, 1000, 3000];

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
  /** Told of each recording's ffmpeg as it is spawned (the tests that inspect or kill it). */
  onProcess?: (recordingId: string, child: ChildProcess) => void;
}

export interface Recordings {
  start(input: CreateRecordingBody): Promise<RecordingView>;
  get(id: string): RecordingView;
  /** Whether this relay holds the recording (the cluster asks it of every node). */
  has(id: string): boolean;
  list(routerId?: string): RecordingView[];
  /** Stops it (API); resolves once the file is finalised. */
  stop(id: string): Promise<RecordingView>;
  /** Stops every recording under way (shutdown, the end of a drain): their files are finalised. */
  stopAll(reason: StopReason): Promise<void>;
  /** Recordings starting or under way. */
  active(): number;
  /** Ends the uploads under way (after stopAll, on shutdown; their files stay and the next start resumes them) and the ffmpeg watchdog. */
  close(): void;
}

export function createRecordings(deps: RecordingsDeps): Recordings {
  const { media, bus, config, logger } = deps;
  const ffmpeg = deps.ffmpegPath ?? 'ffmpeg';
  const stopTimeoutMs = deps.stopTimeoutMs ?? STOP_TIMEOUT_MS;
  const dir = path.resolve(config.dir);
  const files = recordingFiles(dir);
  const recordings = new Map<string, Recording>();
  const uploader: Uploader | undefined = config.s3 ? createUploader(config.s3, logger, deps.upload) : undefined;
  const manifests = createManifests(dir);
  const watchdog = createFfmpegWatchdog(logger);
  const closing = new AbortController();
  const addresses = recordingAddresses(deps.plainListenIp ?? '127.0.0.1');
  const ports = createPortPairs(addresses.listen);

  const { end, fail, release, upload, trim } = createEnding({ media, bus, logger, files, manifests, ports, uploader, recordings, keptEnded: config.max * 4, ffmpeg, stopTimeoutMs });

  function require(id: string): Recording {
    const r = recordings.get(id);
    if (!r) throw notFound('recording', id);
    return r;
  }

  /** What a close elsewhere in the relay means for the recordings under way (closes.ts). */
  function onEvent(event: RelayEvent): void {
    for (const r of recordings.values()) {
      if (!isActive(r) || r.state === 'stopping') continue;
      const outcome = closeOutcome(r, event, media);
      if (outcome === undefined) continue;
      if (typeof outcome === 'string') void end(r, outcome);
      else fail(r, outcome.error);
    }
  }
  bus.listen(onEvent);

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

  async function start(input: CreateRecordingBody): Promise<RecordingView> {
    const { tracks, format } = plan(media, input);
    const open = [...recordings.values()].filter(isActive).length;
    if (open >= config.max) throw new RelayError('RECORDING_CAPACITY_EXCEEDED', `${config.max} recordings are under way (RECORDINGS_MAX)`, { max: config.max });
    const id = randomUUID();
    const ext = FORMATS[format].ext;
    const r = newRecording({ id, routerId: input.routerId, producerIds: [...input.producerIds], appData: input.appData ?? {}, format, file: `${id}.${ext}`, startedAt: new Date(), state: 'starting', tracks });
    // Counted against RECORDINGS_MAX from here, before anything is awaited.
    recordings.set(id, r);
    const setup = (async () => {
      await checkStorage(dir, config.minFreeMb);
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
    await connectTracks(media, r, ports, addresses, files.pathOf(r.id, 'sdp'));
    stillStarting(r);
    // Media flowing already (the usual case): ffmpeg is listening before the answer, so the file holds
    // everything from then on. Otherwise (everyone muted) the recording waits for it (media-wait.ts).
    const flowing = await mediaFlowingWithin(media, r.producerIds, MEDIA_GRACE_MS, () => r.state === 'starting');
    stillStarting(r);
    if (flowing) await launch(r, () => r.state === 'starting');
    stillStarting(r);
    r.timers.push(setTimeout(() => void end(r, 'max_duration'), config.maxDurationS * 1000));
    r.state = 'recording';
    if (r.process) watchStall(r);
    else void launchOnceMediaFlows(r);
    logger.info({ recordingId: r.id, routerId: r.routerId, producerIds: r.producerIds, file: r.file, waitingForMedia: !r.process }, 'recording started');
    bus.publish({ type: 'recording.started', recordingId: r.id, routerId: r.routerId, producerIds: [...r.producerIds], appData: r.appData });
  }

  const watchStall = (r: Recording) => watchForStall(r, { media, stallMs: config.stallS * 1000, sizeOf: files.sizeOf, onStall: fail });

  /** A recording that started without media: ffmpeg once every producer sends; the stall watch from then on. */
  async function launchOnceMediaFlows(r: Recording): Promise<void> {
    const recording = () => r.state === 'recording';
    try {
      if (!(await waitForMedia(media, r.producerIds, () => recording() && !r.process))) return;
      await launch(r, recording);
      watchStall(r);
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
    const child = spawnFfmpeg(r, { ffmpeg, sdpPath: files.pathOf(r.id, 'sdp'), output: files.mediaOf(r), muxer: FORMATS[r.format].muxer, listen: addresses.listen, watchdog });
    deps.onProcess?.(r.id, child);
    void r.exited!.then(() => {
      if (r.state === 'recording' || r.state === 'starting') fail(r, exitError(r, child));
    });
    // From here a file is being written: its manifest lets the next start recover it after a crash.
    const { pid } = child;
    if (isActive(r)) await manifests.save({ ...manifestOf(r), state: 'recording', ...(pid ? { pid } : {}) }).catch((error: unknown) => logger.error({ err: error, recordingId: r.id }, 'recording manifest not written: a crash would leave this recording unrecovered'));
    await waitListening(r, child, addresses.listen, alive);
    for (const track of r.tracks) {
      await media.resumeConsumer(track.consumerId!);
      if (!alive()) throw endedWhileStarting(r);
    }
    const video = r.tracks.find((t) => t.kind === 'video');
    if (video) {
      for (const delay of KEY_FRAME_DELAYS_MS) {
        r.timers.push(setTimeout(() => void media.requestConsumerKeyFrame(video.consumerId!).catch(() => {}), delay));
      }
    }
  }

  /** A recording an earlier run left unfinished (recovery.ts), listed and reported as this run's (adopt.ts). */
  async function adopt(m: Manifest, outcome: RecoveryOutcome): Promise<void> {
    const r = adopted(m, outcome);
    recordings.set(r.id, r);
    await settleAdopted(r, m, outcome, { bus, logger, manifests, uploader, upload });
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
    has: (id) => recordings.has(id),
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
  };
}
