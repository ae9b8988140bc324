// A recording's start before ffmpeg: the request checked against the room (one audio and one video
// producer at most, of recordable codecs, on the router named), the room's disk, and per track a loopback
// port pair, a plain transport sending there and a consumer of the producer made paused (they are resumed
// once ffmpeg listens), then the SDP ffmpeg reads.
import { mkdir, statfs, writeFile } from 'node:fs/promises';
import type { types as ms } from 'mediasoup';
import { RECORDABLE_MIME_TYPES, type CreateRecordingBody } from '../contract/recordings.js';
import { RelayError, validationError } from '../errors.js';
import type { MediaService } from '../media-service.js';
import type { PortPairs } from './ports.js';
import type { Format, Recording, Track } from './recording.js';
import type { RecordingAddresses } from './rtp-source.js';
import { mediaCodecOf, recordingSdp } from './sdp.js';
import { stillStarting } from './start-race.js';

/** The tracks and format of a recording of `input`; refuses what cannot be recorded (a validation error, NOT_FOUND for a router or producer that is not there). */
export function plan(media: Pick<MediaService, 'getRouter' | 'getProducer'>, input: CreateRecordingBody): { tracks: Track[]; format: Format } {
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

/** RECORDINGS_DIR, made if missing; a start is refused (RECORDING_STORAGE_FULL) while it has less than RECORDINGS_MIN_FREE_MB free. */
export async function checkStorage(dir: string, minFreeMb: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const fs = await statfs(dir);
  const freeMb = Math.floor((fs.bavail * fs.bsize) / 1024 / 1024);
  if (freeMb < minFreeMb) {
    throw new RelayError('RECORDING_STORAGE_FULL', `RECORDINGS_DIR has ${freeMb} MB free, less than RECORDINGS_MIN_FREE_MB (${minFreeMb})`, {
      freeMb,
      minFreeMb,
    });
  }
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

type TrackMedia = Pick<MediaService, 'getRouter' | 'createLoopback' | 'connectLoopback' | 'createConsumer'>;

/**
 * Each track's port pair, plain transport and paused consumer, then the SDP at `sdpPath`. Each resource
 * goes onto the recording as soon as it exists, and the start checks after every await that it still
 * starts: what a race leaves is released once the setup has settled (start-race.ts).
 */
export async function connectTracks(media: TrackMedia, r: Recording, ports: PortPairs, addresses: RecordingAddresses, sdpPath: string): Promise<void> {
  const router = media.getRouter(r.routerId).entry.router;
  const rtpCapabilities = recordingCapabilities(router.rtpCapabilities);
  for (const track of r.tracks) {
    track.port = await ports.take();
    stillStarting(r);
    const transportId = await media.createLoopback({ routerId: r.routerId, appData: { recordingId: r.id } });
    track.transportId = transportId;
    stillStarting(r);
    await media.connectLoopback(transportId, { ip: addresses.listen, port: track.port });
    stillStarting(r);
    const consumer = await media.createConsumer({
      transportId,
      producerId: track.producerId,
      rtpCapabilities: rtpCapabilities as never,
      appData: { recordingId: r.id },
    });
    track.consumerId = consumer.consumer.id;
    track.rtpParameters = consumer.consumer.rtpParameters;
    stillStarting(r);
  }
  await writeFile(sdpPath, recordingSdp(r.tracks.map((t) => ({ kind: t.kind, port: t.port, rtpParameters: t.rtpParameters! })), addresses), { mode: 0o600 });
}
