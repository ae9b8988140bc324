// Issue 27 #10: the bounds of a data producer's fields hold what real clients send. Each row is a
// value Chrome, Firefox or Safari report on an RTCDataChannel or that mediasoup-client's
// produceData() sends, created for real on a mediasoup worker (and consumed, so the copy the relay
// gives a data consumer is accepted too); the refused rows are what mediasoup itself refuses.
import { describe, expect, it } from 'vitest';
import { allowSlowTests, useRelayApp } from './support.js';

allowSlowTests();

const { api } = useRelayApp({ MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT: '64' });

/**
 * [what the client sends as sctpStreamParameters, where it comes from, what the relay answers]. The
 * answer is what mediasoup holds: its 3.11 worker keeps a 0 limit as "not set" and leaves it out.
 */
const ACCEPTED: [Record<string, unknown>, string, Record<string, unknown>][] = [
  [{ ordered: true }, 'produceData() (reliable, ordered: the default)', { ordered: true }],
  [{ ordered: false, maxRetransmits: 0 }, 'produceData({ordered: false, maxRetransmits: 0}): the usual unreliable channel', { ordered: false }],
  [{ ordered: true, maxRetransmits: 0 }, 'produceData({maxRetransmits: 0}): 0 is falsy, so mediasoup-client keeps ordered: true', { ordered: true }],
  [{ ordered: true, maxPacketLifeTime: 0 }, 'produceData({maxPacketLifeTime: 0})', { ordered: true }],
  [{ ordered: false, maxPacketLifeTime: 0 }, 'RTCDataChannel {ordered: false, maxPacketLifeTime: 0}', { ordered: false }],
  [{ ordered: false, maxPacketLifeTime: null, maxRetransmits: 0 }, 'an RTCDataChannel read as-is: the unset one is null', { ordered: false }],
  [{ ordered: false, maxPacketLifeTime: 3000, maxRetransmits: null }, 'RTCDataChannel {maxPacketLifeTime: 3000}, maxRetransmits null', { ordered: false, maxPacketLifeTime: 3000 }],
  [{ ordered: true, maxPacketLifeTime: null, maxRetransmits: null }, 'a reliable RTCDataChannel read as-is', { ordered: true }],
  [{ ordered: false, maxRetransmits: 65_535 }, 'the W3C maximum (unsigned short)', { ordered: false, maxRetransmits: 65_535 }],
  [{ ordered: false, maxPacketLifeTime: 65_535 }, 'the W3C maximum (unsigned short)', { ordered: false, maxPacketLifeTime: 65_535 }],
  [{ ordered: false }, 'unordered, reliable', { ordered: false }],
  [{ maxRetransmits: 5 }, 'ordered left out with a limit: unordered (mediasoup)', { ordered: false, maxRetransmits: 5 }],
];

/** Refused by mediasoup's rules too (or beyond what a browser can send). */
const REFUSED: [Record<string, unknown>, string][] = [
  [{ ordered: false, maxPacketLifeTime: 100, maxRetransmits: 1 }, 'sctpStreamParameters'],
  [{ ordered: true, maxRetransmits: 1 }, 'sctpStreamParameters'],
  [{ ordered: true, maxPacketLifeTime: 1 }, 'sctpStreamParameters'],
  [{ ordered: false, maxRetransmits: 65_536 }, 'sctpStreamParameters.maxRetransmits'],
  [{ ordered: false, maxRetransmits: -1 }, 'sctpStreamParameters.maxRetransmits'],
  [{ ordered: false, maxPacketLifeTime: 1.5 }, 'sctpStreamParameters.maxPacketLifeTime'],
  [{ ordered: false, maxRetransmits: '0' }, 'sctpStreamParameters.maxRetransmits'],
];

describe('data producers: the values real clients send', () => {
  it('accepts each, creates it on the worker, and a data consumer of it', { timeout: 60_000 }, async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send', { enableSctp: true });
    const recv = await api.transport(router.id, 'recv', { enableSctp: true });
    let streamId = 0;
    for (const [parameters, source, answered] of ACCEPTED) {
      // Chrome and Safari pick even or odd ids by DTLS role, Firefox too: 0, 1, ... up to the 1024 streams.
      const id = streamId++ === ACCEPTED.length - 1 ? 1023 : streamId;
      const produced = await api.post('/internal/v1/data-producers', { transportId: send.id, sctpStreamParameters: { streamId: id, ...parameters }, label: source.slice(0, 20), protocol: 'json' });
      expect(produced.status, `${source}: ${JSON.stringify(produced.body)}`).toBe(201);
      expect(produced.body.sctpStreamParameters, source).toEqual({ streamId: id, ...answered });
      const consumed = await api.post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: produced.body.id });
      expect(consumed.status, `${source}: ${JSON.stringify(consumed.body)}`).toBe(201);
      expect(consumed.body.sctpStreamParameters, source).toMatchObject({ ordered: answered.ordered });
    }
  });

  it('refuses what mediasoup refuses, naming the field', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send', { enableSctp: true });
    for (const [parameters, path] of REFUSED) {
      const res = await api.post('/internal/v1/data-producers', { transportId: send.id, sctpStreamParameters: { streamId: 1, ...parameters } });
      expect(res.status, JSON.stringify(parameters)).toBe(400);
      expect(res.body.details.issues.map((i: { path: string }) => i.path), JSON.stringify(parameters)).toContain(path);
    }
  });

  it('labels and protocols as browsers make them: empty, unicode, up to the bound', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send', { enableSctp: true });
    for (const label of ['', 'chat', '💬 réactions', 'x'.repeat(1024)]) {
      const res = await api.post('/internal/v1/data-producers', { transportId: send.id, label, protocol: label });
      expect(res.status, label.slice(0, 20)).toBe(201);
      expect(res.body.label).toBe(label);
    }
  });
});
