// Recordings the relay makes itself: one ffmpeg per recording, fed over loopback plain transports,
// stream copy (no re-encoding) into WebM (VP8/VP9 + Opus), Matroska (H264 + Opus) or Ogg (Opus alone)
// under RECORDINGS_DIR, named by the recording's id only (docs/media-relay.md "Recording and plain RTP").
import { z } from 'zod';
import { appDataSchema } from './bounds.js';
import { appDataView, id, timeString } from './common.js';
import { errorRow, notFoundRow, VALIDATION } from './errors.js';
import { relayRoute } from './route.js';

/** What ends a recording (recording.stopped `reason`). */
export const recordingStopReason = z.enum(['api', 'producer_closed', 'router_closed', 'max_duration', 'shutdown']);
export const recordingState = z.enum(['starting', 'recording', 'stopping', 'stopped', 'failed']);

/** The codecs a recording copies (their container follows from them). */
export const RECORDABLE_MIME_TYPES = ['audio/opus', 'video/VP8', 'video/VP9', 'video/H264'] as const;

export const createRecordingBody = z.object({
  routerId: id,
  producerIds: z
    .array(id)
    .min(1)
    .max(2)
    .describe('one audio and/or one video producer of the router (Opus; VP8, VP9 or H264); a simulcast producer is recorded at its highest layer'),
  appData: appDataSchema.optional(),
});

export type CreateRecordingBody = z.infer<typeof createRecordingBody>;

export const listRecordingsQuery = z.object({ routerId: id.optional().describe("only this router's recordings") });

export const recordingSchema = z.object({
  id: z.string(),
  routerId: z.string(),
  producerIds: z.array(z.string()),
  state: recordingState.describe('recording: under way, its ffmpeg started once media flows on every track (a recording of paused producers waits)'),
  startedAt: timeString,
  format: z.enum(['webm', 'mkv', 'ogg']),
  file: z.string().describe("the file's name in RECORDINGS_DIR: the recording's id and the format's extension"),
  appData: appDataView,
  reason: recordingStopReason.optional().describe('why it stopped (state stopped)'),
  error: z.string().optional().describe('why it failed (state failed)'),
  bytes: z.int().min(0).optional().describe("the file's size once it is finalised"),
  durationMs: z.int().min(0).optional().describe('wall time from start to stop, once it is finalised'),
  upload: z.enum(['pending', 'uploaded', 'failed']).optional().describe('with RECORDINGS_S3_BUCKET: the upload of the finished file'),
  key: z.string().optional().describe("the object's key in RECORDINGS_S3_BUCKET once uploaded"),
});

export const recordingListSchema = z.object({ recordings: z.array(recordingSchema) });

export const createRecording = relayRoute({
  method: 'post',
  path: '/v1/recordings',
  summary: 'Start recording producers of a router (one ffmpeg, stream copy into RECORDINGS_DIR); with paused or silent producers it waits for their media',
  body: createRecordingBody,
  success: { 201: { description: 'recording', schema: recordingSchema } },
  errors: [
    errorRow('VALIDATION_ERROR', 'body fails its schema, two producers of one kind, a producer of another router, or a codec the recorder does not copy; details.issues'),
    errorRow('NOT_FOUND', 'router or producer not found, also one that closed while the recording started (nothing of the recording is left); details {resource, id}'),
    errorRow('RECORDING_CAPACITY_EXCEEDED'),
    errorRow('RECORDING_STORAGE_FULL'),
    errorRow(
      'CONFLICT',
      'recordings are not available on this relay (ffmpeg could not be started; details {reason: "ffmpeg"}), or the recording ended while it started (a DELETE, the shutdown, a failure; nothing of it is left): details {recordingId, state, reason: "ended_while_starting", stopReason?, error?}',
    ),
  ],
});

export const listRecordings = relayRoute({
  method: 'get',
  path: '/v1/recordings',
  summary: 'The recordings under way and those ended since this process started (the last RECORDINGS_MAX × 4 kept)',
  query: listRecordingsQuery,
  success: { 200: { description: 'the recordings, oldest first', schema: recordingListSchema } },
  errors: [VALIDATION],
});

export const getRecording = relayRoute({
  method: 'get',
  path: '/v1/recordings/{id}',
  summary: 'A recording',
  success: { 200: { description: 'the recording', schema: recordingSchema } },
  errors: [notFoundRow('recording')],
});

export const stopRecording = relayRoute({
  method: 'delete',
  path: '/v1/recordings/{id}',
  summary: 'Stop a recording; answers once its file is finalised (one still starting: once its start has released what it made)',
  success: { 200: { description: 'the recording, stopped (or failed)', schema: recordingSchema } },
  errors: [notFoundRow('recording')],
});
