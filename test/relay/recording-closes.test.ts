// What a close elsewhere in the relay means for a recording (src/relay/recordings/closes.ts): the close
// of a track's loopback transport is read from its `plainTransport.closed` event by the media service's
// loopbackClosed (the recordings do not name that kind), with the same outcome and error as before.
import { describe, expect, it } from 'vitest';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { loopbackClosed } from '../../src/relay/kinds/plain/ops.js';
import { closeOutcome as closeOutcomeWith } from '../../src/relay/recordings/closes.js';
import type { Recording } from '../../src/relay/recordings/recording.js';

/** As the recorder calls it: with the media service's loopbackClosed (which reads no deps). */
const closeOutcome = (r: Recording, event: RelayEvent) => closeOutcomeWith(r, event, { loopbackClosed: (e) => loopbackClosed(undefined as never, e) });

const recording = { routerId: 'r1', producerIds: ['p1'], tracks: [{ kind: 'audio', producerId: 'p1', port: 40000, transportId: 't1', consumerId: 'c1' }] } as unknown as Recording;
const transportClosed = (id: string, reason: string): RelayEvent =>
  ({ type: 'plainTransport.closed', plainTransportId: id, routerId: 'r1', appData: {}, reason }) as unknown as RelayEvent;

describe('closeOutcome', () => {
  it("fails the recording when its own loopback transport closes through the API, saying so", () => {
    expect(closeOutcome(recording, transportClosed('t1', 'api'))).toEqual({ error: 'its plain transport closed (api)' });
  });

  it("stops or fails it as the close's reason says when the room or the worker took the transport", () => {
    expect(closeOutcome(recording, transportClosed('t1', 'router_closed'))).toBe('router_closed');
    expect(closeOutcome(recording, transportClosed('t1', 'shutdown'))).toBe('shutdown');
    expect(closeOutcome(recording, transportClosed('t1', 'worker_died'))).toEqual({ error: 'the media worker holding it died' });
  });

  it('ignores the close of a transport that is not its own', () => {
    expect(closeOutcome(recording, transportClosed('t2', 'api'))).toBeUndefined();
  });
});
