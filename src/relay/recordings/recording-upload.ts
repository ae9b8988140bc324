// A stopped recording's upload (upload.ts does the transfer): in the background, its manifest kept until
// it is done (the next start resumes it otherwise), `recording.uploaded` once stored, `recording.failed`
// after the last retry. The recording's view shows it: `upload` pending, uploaded or failed, and `key`.
import type { Logger } from '../../logger.js';
import type { RelayBus } from '../events/index.js';
import type { Manifests } from './manifest.js';
import { FORMATS, type Recording, type RecordingFiles } from './recording.js';
import { UploadInterrupted, type Uploader } from './upload.js';

export interface RecordingUpload {
  uploader: Uploader;
  files: RecordingFiles;
  manifests: Manifests;
  bus: RelayBus;
  logger: Logger;
}

/** Uploads a finished file in the background: recording.uploaded, or recording.failed after the last retry. */
export function uploadRecording(r: Recording, deps: RecordingUpload): void {
  const { manifests, bus, logger } = deps;
  r.upload = 'pending';
  const key = r.file;
  logger.info({ recordingId: r.id, key }, 'recording upload started');
  deps.uploader.upload(deps.files.mediaOf(r), key, FORMATS[r.format].contentType).then(
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
