// Recordings: the contract's routes (contract/recordings.ts) -> the recorder (recordings/recorder.ts).
import { createRecording, getRecording, listRecordings, stopRecording } from '../contract/recordings.js';
import type { Recordings } from '../recordings/recorder.js';
import { relayRouter, withJsonBody } from './router.js';

export function recordingsRoutes(recordings: Recordings) {
  return relayRouter()
    .openapi(withJsonBody(createRecording), async (c) => c.json(await recordings.start(c.req.valid('json')), 201))
    .openapi(listRecordings, (c) => c.json({ recordings: recordings.list(c.req.valid('query').routerId) }, 200))
    .openapi(getRecording, (c) => c.json(recordings.get(c.req.valid('param').id), 200))
    .openapi(stopRecording, async (c) => c.json(await recordings.stop(c.req.valid('param').id), 200));
}
