// A recording as the recorder holds it: what it records, its state, its ffmpeg and timers, and where its
// files are in RECORDINGS_DIR (`<id>.<ext>`, the SDP `<id>.sdp`, the manifest `<id>.json`).
import type { ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import type { recordingSchema, recordingStopReason } from '../contract/recordings.js';
import type { Manifest } from './manifest.js';

export type StopReason = z.infer<typeof recordingStopReason>;
export type RecordingView = z.output<typeof recordingSchema>;
export type Format = RecordingView['format'];

export interface Track {
  kind: 'audio' | 'video';
  producerId: string;
  port: number;
  /** The loopback transport (the media service's createLoopback) that sends the track to ffmpeg. */
  transportId?: string;
  consumerId?: string;
  rtpParameters?: ms.RtpParameters;
}

export interface Recording {
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
  /** The next stall check (stall-watch.ts): cleared on release. */
  stallCheck?: NodeJS.Timeout;
  stderr: string;
  /** Resolves once its start has settled and released whatever a race left (start-race.ts). */
  settled?: Promise<void>;
}

/** A recording's record as it begins (a start's, or one an earlier run left), with nothing running yet. */
export function newRecording(fields: Pick<Recording, 'id' | 'routerId' | 'producerIds' | 'appData' | 'format' | 'file' | 'startedAt' | 'state' | 'tracks'>): Recording {
  return { ...fields, timers: [], stderr: '' };
}

export const FORMATS: Record<Format, { muxer: string; ext: string; contentType: string }> = {
  webm: { muxer: 'webm', ext: 'webm', contentType: 'video/webm' },
  mkv: { muxer: 'matroska', ext: 'mkv', contentType: 'video/x-matroska' },
  ogg: { muxer: 'ogg', ext: 'ogg', contentType: 'audio/ogg' },
};

export const isActive = (r: Recording) => r.state === 'starting' || r.state === 'recording' || r.state === 'stopping';

/** Only ids the relay made reach a path: a UUID. */
const RECORDING_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface RecordingFiles {
  /** The file's path; refuses anything but an id the relay made (ids never reach a path unchecked). */
  pathOf: (id: string, ext: string) => string;
  /** The media file ffmpeg writes. */
  mediaOf: (r: Recording) => string;
  /** The media file's size so far (0 when there is none). */
  sizeOf: (r: Recording) => Promise<number>;
}

export function recordingFiles(dir: string): RecordingFiles {
  function pathOf(id: string, ext: string): string {
    if (!RECORDING_ID.test(id)) throw new Error(`not a recording id: ${id}`);
    const file = path.resolve(dir, `${id}.${ext}`);
    if (path.dirname(file) !== dir) throw new Error('recording path outside RECORDINGS_DIR');
    return file;
  }
  const mediaOf = (r: Recording) => pathOf(r.id, FORMATS[r.format].ext);
  return {
    pathOf,
    mediaOf,
    sizeOf: async (r) =>
      stat(mediaOf(r)).then(
        (s) => s.size,
        () => 0,
      ),
  };
}

/** What its manifest (manifest.ts) says of a recording, but for the state. */
export function manifestOf(r: Recording): Omit<Manifest, 'state'> {
  return { version: 1, id: r.id, routerId: r.routerId, producerIds: r.producerIds, appData: r.appData, format: r.format, file: r.file, startedAt: r.startedAt.toISOString(), relayPid: process.pid };
}
