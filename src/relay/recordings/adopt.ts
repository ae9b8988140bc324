// A recording an earlier run of the relay left unfinished (recovery.ts found and settled it), taken into
// this run's list: GET shows it, the bus reports it (`recording.recovered` or `recording.failed`), and an
// upload still owed resumes when RECORDINGS_S3_BUCKET is set.
import type { Logger } from '../../logger.js';
import type { RelayBus } from '../events/index.js';
import type { Manifest, Manifests } from './manifest.js';
import { manifestOf, newRecording, type Recording } from './recording.js';
import type { RecoveryOutcome } from './recovery.js';
import type { Uploader } from './upload.js';

export interface AdoptDeps {
  bus: RelayBus;
  logger: Logger;
  manifests: Manifests;
  uploader: Uploader | undefined;
  upload(to: Uploader, r: Recording): void;
}

/** The recording of manifest `m` as this run lists it; listed by the caller before anything is awaited. */
export function adopted(m: Manifest, outcome: RecoveryOutcome): Recording {
  return newRecording({ id: m.id, routerId: m.routerId, producerIds: m.producerIds, appData: m.appData, format: m.format, file: m.file, startedAt: new Date(m.startedAt), state: outcome.state === 'failed' ? 'failed' : 'stopped', tracks: [] });
}

/** Reports the adopted recording `r`, and resumes its upload or forgets its manifest. */
export async function settleAdopted(r: Recording, m: Manifest, outcome: RecoveryOutcome, deps: AdoptDeps): Promise<void> {
  const { bus, logger, manifests, uploader } = deps;
  if (outcome.state === 'failed') {
    r.error = outcome.error;
    await manifests.remove(r.id).catch(() => {});
    logger.error({ recordingId: r.id, error: outcome.error }, 'recording of an earlier run not recovered');
    bus.publish({ type: 'recording.failed', recordingId: r.id, routerId: r.routerId, error: outcome.error, appData: r.appData });
    return;
  }
  r.bytes = outcome.bytes;
  if (m.durationMs !== undefined) r.durationMs = m.durationMs;
  if (outcome.state === 'recovered') {
    logger.warn({ recordingId: r.id, file: r.file, bytes: r.bytes }, 'recording of an earlier run recovered');
    bus.publish({ type: 'recording.recovered', recordingId: r.id, routerId: r.routerId, file: r.file, bytes: outcome.bytes, appData: r.appData });
  }
  if (uploader) {
    await manifests.save({ ...manifestOf(r), state: 'stopped', bytes: outcome.bytes, ...(r.durationMs === undefined ? {} : { durationMs: r.durationMs }) });
    deps.upload(uploader, r);
  } else {
    if (outcome.state === 'upload' && !m.unfinished) logger.warn({ recordingId: r.id, file: r.file }, 'an upload of an earlier run is not resumed: RECORDINGS_S3_BUCKET is not set; the file stays');
    await manifests.remove(r.id).catch(() => {});
  }
}
