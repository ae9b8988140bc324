// What the recordings API answers about a recording: its view (contract/recordings.ts), made from the
// recorder's own record of it (recording.ts), with the optional fields only once they are known.
import { formatTime } from '../../time.js';
import type { Recording, RecordingView } from './recording.js';

export function view(r: Recording): RecordingView {
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
