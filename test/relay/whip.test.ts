// WHIP and WHEP end to end on one test app: endpoints minted on the internal surface, a werift peer
// publishing opus and VP8 by one POST of its offer (RTP counted at the relay's producers), a second
// werift peer playing them by WHEP, and every refusal with its status and nothing left behind.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RTCPeerConnection, RTCRtpCodecParameters, RTCRtpHeaderExtensionParameters, type RTCRtpTransceiver } from 'werift';
import { createRelayClient } from '../../src/client/relay-client.js';
import { allocateRtcPorts, buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';
import { opusPacket, vp8Packet } from '../support/webrtc/rtp.js';
import { waitFor } from '../support/webrtc/wait.js';
import { fuzzParameters } from '../reliability/support/fuzz.js';

const internal = { 'X-Internal-Token': TEST_INTERNAL_TOKEN, 'Content-Type': 'application/json' };
const MID_URI = 'urn:ietf:params:rtp-hdrext:sdes:mid';

let t: TestApp;
const peers: RTCPeerConnection[] = [];
const timers: NodeJS.Timeout[] = [];

const TURN_SECRET = 'whip-test-turn-secret-0123456789';

beforeAll(async () => {
  // TURN configured: a WHIP answer carries one Link header per TURN URL (the URLs are never dialled here).
  // The WebRtcServer's port and seven for the PipeTransports that bring producers to WHEP sessions' routers.
  const ports = allocateRtcPorts(8);
  t = await buildTestApp({ TURN_URLS: 'turn:127.0.0.1:3478?transport=udp,turns:turn.example.com:5349?transport=tcp', TURN_SECRET, RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max) });
});
afterAll(async () => {
  for (const timer of timers) clearInterval(timer);
  for (const pc of peers) await pc.close().catch(() => {});
  await t?.close();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await t.app.request(path, { method, headers: internal, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined, list: text ? (JSON.parse(text) as unknown[]) : [] };
}

async function newRouter(): Promise<string> {
  const { status, body } = await call('POST', '/internal/v1/routers', {});
  expect(status).toBe(201);
  return body!.id as string;
}

async function mint(kind: 'whip' | 'whep', body: Record<string, unknown>) {
  const res = await call('POST', `/internal/v1/${kind}-endpoints`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; url: string; token: string; expiresAt: string };
}

function peer(): RTCPeerConnection {
  const pc = new RTCPeerConnection({
    iceServers: [],
    bundlePolicy: 'max-bundle',
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceFilterCandidatePair: (pair) => pair.localCandidate.host === '127.0.0.1',
    codecs: {
      audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })],
      video: [new RTCRtpCodecParameters({ mimeType: 'video/VP8', clockRate: 90000, payloadType: 96, rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }] })],
    },
    headerExtensions: {
      audio: [new RTCRtpHeaderExtensionParameters({ id: 1, uri: MID_URI })],
      video: [new RTCRtpHeaderExtensionParameters({ id: 1, uri: MID_URI })],
    },
  });
  peers.push(pc);
  return pc;
}

/** A werift publisher's offer (opus + VP8, sendonly). */
async function publisherOffer() {
  const pc = peer();
  const audio = pc.addTransceiver('audio', { direction: 'sendonly' });
  const video = pc.addTransceiver('video', { direction: 'sendonly' });
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  return { pc, audio, video, sdp: pc.localDescription!.sdp };
}

function startSending(audio: RTCRtpTransceiver, video: RTCRtpTransceiver) {
  let a = 0;
  let v = 0;
  timers.push(
    setInterval(() => void audio.sender.sendRtp(opusPacket(a, a++ & 0xffff, a * 960)).catch(() => {}), 20),
    setInterval(() => void video.sender.sendRtp(vp8Packet(v, v & 0xffff, v * 3000, v++ & 0x7fff, v % 30 === 1)).catch(() => {}), 33),
  );
}

async function post(url: string, sdp: string, headers: Record<string, string>) {
  return t.app.request(new URL(url).pathname, { method: 'POST', headers: { 'Content-Type': 'application/sdp', ...headers }, body: sdp });
}

/** The mediasoup routers on the workers, and the transports of the room's first router (its pipe transports among them). */
async function engineState(routerId: string) {
  let routers = 0;
  for (const slot of t.media.pool.slots) if (slot.worker) routers += ((await slot.worker.dump()) as { routerIds: string[] }).routerIds.length;
  const roomTransports = ((await t.roomOf(routerId)!.router.dump()) as { transportIds: string[] }).transportIds.length;
  return { routers, roomTransports };
}

/** A werift player of audio and video, counting the RTP packets it receives of each. */
function player() {
  const pc = peer();
  const received = { audio: 0, video: 0 };
  for (const kind of ['audio', 'video'] as const) {
    const transceiver = pc.addTransceiver(kind, { direction: 'recvonly' });
    transceiver.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => (received[kind] += 1)));
  }
  return { pc, received };
}

async function play(url: string, token: string, pc: RTCPeerConnection) {
  await pc.setLocalDescription(await pc.createOffer());
  const res = await post(url, pc.localDescription!.sdp, { Authorization: `Bearer ${token}` });
  const answer = await res.text();
  expect(res.status, answer).toBe(201);
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  return { location: res.headers.get('location')!, answer };
}

/** Transports, producers, consumers and endpoints the relay holds now. */
function counts() {
  const { transports, producers, consumers, whipEndpoints, whepEndpoints } = t.media.info().counts;
  return { transports, producers, consumers, whipEndpoints, whepEndpoints };
}

describe('WHIP and WHEP endpoints (internal API)', () => {
  it('mints, lists without the token, bounds ttlS and revokes; endpoints close with their router', async () => {
    const routerId = await newRouter();
    const minted = await mint('whip', { routerId, appData: { userId: 'u1' } });
    expect(minted.url).toBe(`http://localhost/whip/${minted.id}`);
    expect(minted.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(minted.expiresAt) - Date.now()).toBeGreaterThan(3590_000);
    const whep = await mint('whep', { routerId, ttlS: 10 });
    expect(Date.parse(whep.expiresAt) - Date.now()).toBeLessThanOrEqual(10_000);

    for (const ttlS of [9, 86_401, 1.5]) expect((await call('POST', '/internal/v1/whip-endpoints', { routerId, ttlS })).status).toBe(400);
    expect((await call('POST', '/internal/v1/whip-endpoints', { routerId: 'nope' })).status).toBe(404);
    expect((await call('POST', '/internal/v1/whep-endpoints', { routerId, producerIds: ['nope'] })).status).toBe(404);

    const state = await call('GET', `/internal/v1/routers/${routerId}`);
    const listed = state.body!.whipEndpoints as Record<string, unknown>[];
    expect(listed).toEqual([expect.objectContaining({ id: minted.id, url: minted.url, appData: { userId: 'u1' }, sessions: [] })]);
    expect(JSON.stringify(state.body)).not.toContain(minted.token);
    expect((state.body!.whepEndpoints as unknown[]).length).toBe(1);

    expect((await call('DELETE', `/internal/v1/whip-endpoints/${minted.id}`)).status).toBe(204);
    expect((await call('DELETE', `/internal/v1/whip-endpoints/${minted.id}`)).status).toBe(404);
    const revoked = await post(minted.url, 'v=0', { Authorization: `Bearer ${minted.token}` });
    expect(revoked.status).toBe(404);

    // The typed client mints and revokes too.
    const relay = createRelayClient({ baseUrl: 'http://relay.test', token: TEST_INTERNAL_TOKEN, fetch: t.app.request });
    const typed = await relay.createWhipEndpoint({ routerId, ttlS: 60 });
    expect(typed.url).toMatch(/\/whip\//);
    await relay.closeWhipEndpoint(typed.id);
    await expect(relay.closeWhipEndpoint(typed.id)).rejects.toMatchObject({ status: 404 });

    expect((await call('DELETE', `/internal/v1/routers/${routerId}`)).status).toBe(204);
    expect((await call('DELETE', `/internal/v1/whep-endpoints/${whep.id}`)).status).toBe(404);
  });

  it('takes the public origin from a forwarded host only under TRUST_PROXY', async () => {
    const routerId = await newRouter();
    const res = await t.app.request('/internal/v1/whip-endpoints', { method: 'POST', headers: { ...internal, 'X-Forwarded-Host': 'evil.example' }, body: JSON.stringify({ routerId }) });
    expect(((await res.json()) as { url: string }).url).toMatch(/^http:\/\/localhost\/whip\//);
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

describe('WHIP publish and WHEP play (werift)', () => {
  it('publishes opus and VP8 by one POST, plays them by WHEP, ends by DELETE', { timeout: 30_000 }, async () => {
    const routerId = await newRouter();
    const endpoint = await mint('whip', { routerId, appData: { userId: 'pub' } });
    const before = counts();
    const publisher = await publisherOffer();
    const res = await post(endpoint.url, publisher.sdp, { Authorization: `Bearer ${endpoint.token}` });
    const answer = await res.text();
    expect(res.status, answer).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/sdp');
    const location = res.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^/whip/${endpoint.id}/sessions/[0-9a-f-]{36}$`));
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(res.headers.get('access-control-expose-headers')).toContain('Location');
    // One Link per TURN URL, with a TURN REST credential: HMAC-SHA1 of the username under TURN_SECRET.
    const links = res.headers.get('link')!.split(/,\s*(?=<)/);
    expect(links).toHaveLength(2);
    const link = /^<(turn:127\.0\.0\.1:3478\?transport=udp)>; rel="ice-server"; username="([^"]+)"; credential="([^"]+)"; credential-type="password"$/.exec(links[0]!);
    expect(link, links[0]).not.toBeNull();
    expect(link![3]).toBe(createHmac('sha1', TURN_SECRET).update(link![2]!).digest('base64'));
    expect(counts()).toMatchObject({ transports: before.transports + 1, producers: before.producers + 2 });

    await publisher.pc.setRemoteDescription({ type: 'answer', sdp: answer });
    await waitFor(() => publisher.pc.connectionState === 'connected', { timeoutMs: 10_000, what: 'the publisher to connect' });
    startSending(publisher.audio, publisher.video);

    const state = await call('GET', `/internal/v1/routers/${routerId}`);
    const transport = (state.body!.transports as { id: string; appData: Record<string, unknown>; producers: { id: string; kind: string; appData: Record<string, unknown> }[] }[])[0]!;
    expect(transport.appData).toMatchObject({ userId: 'pub', whipEndpointId: endpoint.id });
    expect(transport.producers.map((p) => p.kind).sort()).toEqual(['audio', 'video']);
    expect(transport.producers[0]!.appData).toMatchObject({ userId: 'pub', whipEndpointId: endpoint.id });
    for (const producer of transport.producers) {
      await waitFor(
        async () => {
          const stats = await call('GET', `/internal/v1/producers/${producer.id}/stats`);
          const first = stats.list[0] as { packetCount?: number } | undefined;
          return (first?.packetCount ?? 0) > 10;
        },
        { timeoutMs: 10_000, what: `RTP at the ${producer.kind} producer` },
      );
    }

    // One session per WHIP endpoint by default.
    const second = await publisherOffer();
    const refused = await post(endpoint.url, second.sdp, { Authorization: `Bearer ${endpoint.token}` });
    expect(refused.status).toBe(429);

    // WHEP: two werift players receive both, with the payload types of their offers (opus 111 and VP8 96,
    // not the room's), through one router their sessions share; it and its pipes go with the last session.
    const engineBefore = await engineState(routerId);
    const whep = await mint('whep', { routerId });
    const players = [player(), player()];
    const sessions = [];
    for (const one of players) sessions.push(await play(whep.url, whep.token, one.pc));
    expect(sessions[0]!.answer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111\r$/m);
    expect(sessions[0]!.answer).toMatch(/^m=video \d+ UDP\/TLS\/RTP\/SAVPF 96\b/m);
    for (const one of players) await waitFor(() => one.received.audio > 10 && one.received.video > 10, { timeoutMs: 10_000, what: `RTP at the WHEP player (${JSON.stringify(one.received)})` });
    expect(await engineState(routerId)).toEqual({ routers: engineBefore.routers + 1, roomTransports: engineBefore.roomTransports + 1 });
    expect(counts()).toMatchObject({ transports: before.transports + 3, consumers: before.consumers + 4 });
    for (const session of sessions) expect((await t.app.request(session.location, { method: 'DELETE', headers: { Authorization: `Bearer ${whep.token}` } })).status).toBe(200);
    await waitFor(async () => JSON.stringify(await engineState(routerId)) === JSON.stringify(engineBefore), { timeoutMs: 3000, what: "the sessions' router and pipes to close" });
    expect(counts()).toMatchObject({ transports: before.transports + 1, consumers: before.consumers });

    // PATCH: If-Match required, a stale one refused, a current one taken (an ICE restart answers a new ETag).
    const patch = (headers: Record<string, string>, body: string) => t.app.request(location, { method: 'PATCH', headers: { Authorization: `Bearer ${endpoint.token}`, 'Content-Type': 'application/trickle-ice-sdpfrag', ...headers }, body });
    expect((await patch({}, 'a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n')).status).toBe(428);
    expect((await patch({ 'If-Match': '"stale"' }, 'a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n')).status).toBe(412);
    expect((await patch({ 'If-Match': etag }, 'a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n')).status).toBe(204);
    const restart = await patch({ 'If-Match': etag }, 'a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwxyz\r\n');
    expect(restart.status).toBe(200);
    expect(await restart.text()).toMatch(/a=ice-ufrag:/);
    expect(restart.headers.get('etag')).not.toBe(etag);

    const ended = await t.app.request(location, { method: 'DELETE', headers: { Authorization: `Bearer ${endpoint.token}` } });
    expect(ended.status).toBe(200);
    expect((await t.app.request(location, { method: 'DELETE', headers: { Authorization: `Bearer ${endpoint.token}` } })).status).toBe(404);
    await waitFor(() => counts().producers === before.producers, { timeoutMs: 3000, what: 'the producers to close' });
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

describe('WHEP of a room without producers yet (werift)', () => {
  // werift routes received RTP by signalled SSRC only, so it cannot take a stream whose SSRC the answer
  // could not name yet: here the relay's side is checked (consumers made in the free sections and
  // sending); Chromium, which takes such a stream by its payload type, decodes it in whip-browser.test.ts.
  it('accepts the session and sends it the producers that appear, again after a publisher comes back', { timeout: 40_000 }, async () => {
    const routerId = await newRouter();
    const whep = await mint('whep', { routerId });
    const before = counts();
    const { pc } = player();
    const { answer } = await play(whep.url, whep.token, pc);
    await waitFor(() => pc.connectionState === 'connected', { timeoutMs: 10_000, what: 'the player to connect' });
    // Both sections are taken, sendonly, with no SSRC until a producer comes.
    expect(answer.match(/^a=sendonly\r$/gm)).toHaveLength(2);
    expect(answer).not.toMatch(/^a=ssrc:/m);
    expect(counts()).toMatchObject({ transports: before.transports + 1, consumers: before.consumers });

    const endpoint = await mint('whip', { routerId });
    for (let round = 1; round <= 2; round++) {
      const publisher = await publisherOffer();
      const res = await post(endpoint.url, publisher.sdp, { Authorization: `Bearer ${endpoint.token}` });
      expect(res.status).toBe(201);
      await publisher.pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
      await waitFor(() => publisher.pc.connectionState === 'connected', { timeoutMs: 10_000, what: 'the publisher to connect' });
      startSending(publisher.audio, publisher.video);
      await waitFor(() => counts().consumers === before.consumers + 2, { timeoutMs: 5000, what: `round ${round}: the session's consumers of the new producers` });
      const state = await call('GET', `/internal/v1/routers/${routerId}`);
      const session = (state.body!.whepEndpoints as { sessions: { transportId: string; producerIds: string[] }[] }[])[0]!.sessions[0]!;
      expect(session.producerIds).toHaveLength(2 * round);
      const consumers = (state.body!.transports as { id: string; consumers: { id: string; paused: boolean }[] }[]).find((tr) => tr.id === session.transportId)!.consumers;
      expect(consumers.map((c) => c.paused)).toEqual([false, false]);
      for (const consumer of consumers) {
        await waitFor(
          async () => {
            const stats = (await call('GET', `/internal/v1/consumers/${consumer.id}/stats`)).list as { type: string; packetCount?: number }[];
            return (stats.find((x) => x.type === 'outbound-rtp')?.packetCount ?? 0) > 10;
          },
          { timeoutMs: 10_000, what: `round ${round}: RTP sent to the WHEP player` },
        );
      }
      // The publisher leaves: its producers close, and so do the player's consumers of them.
      expect((await t.app.request(res.headers.get('location')!, { method: 'DELETE', headers: { Authorization: `Bearer ${endpoint.token}` } })).status).toBe(200);
      await waitFor(() => counts().consumers === before.consumers, { timeoutMs: 3000, what: 'the consumers to close with the producers' });
    }
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

describe('WHEP sessions and the RTC port range', () => {
  it("answers 503 when no port is left for a session's pipe transports, counts those ports for the other kinds, and leaves nothing behind; consuming on a session's transport is refused", { timeout: 30_000 }, async () => {
    // This app's range: the WebRtcServer's port and 7 more; each WHEP session router's pipe pair takes 2.
    const routerId = await newRouter();
    const whip = await mint('whip', { routerId });
    const publisher = await publisherOffer();
    expect((await post(whip.url, publisher.sdp, { Authorization: `Bearer ${whip.token}` })).status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const whep = await mint('whep', { routerId });
      await play(whep.url, whep.token, player().pc);
    }
    // A session's transport is on its own router: the API does not consume on it (409, nothing made).
    const state = await call('GET', `/internal/v1/routers/${routerId}`);
    const sessionTransport = (state.body!.whepEndpoints as { sessions: { transportId: string }[] }[])[0]!.sessions[0]!.transportId;
    const producerId = (state.body!.transports as { producers: { id: string }[] }[]).flatMap((tr) => tr.producers)[0]!.id;
    const consumersBefore = counts().consumers;
    const foreign = await call('POST', '/internal/v1/consumers', { transportId: sessionTransport, producerId, rtpCapabilities: state.body!.rtpCapabilities });
    expect(foreign.status).toBe(409);
    expect(foreign.body).toMatchObject({ code: 'CONFLICT', details: { transportId: sessionTransport } });
    expect(counts().consumers).toBe(consumersBefore);

    // 6 of the 7 held: a plain transport (one port) still fits, and takes the last.
    const plain = await call('POST', '/internal/v1/plain-transports', { routerId, comedia: true });
    expect(plain.status).toBe(201);
    const refusedPlain = await call('POST', '/internal/v1/plain-transports', { routerId, comedia: true });
    expect(refusedPlain.status).toBe(500);
    expect(refusedPlain.body).toMatchObject({ code: 'MEDIASOUP_ERROR' });
    expect(String(refusedPlain.body!.message)).toMatch(/no port left/);
    expect((await call('DELETE', `/internal/v1/plain-transports/${plain.body!.id as string}`)).status).toBe(204);

    // Now a fourth session needs 2 of the 1 left.
    const fourth = await mint('whep', { routerId });
    const listener = player();
    await listener.pc.setLocalDescription(await listener.pc.createOffer());
    const before = counts();
    const engineBefore = await engineState(routerId);
    const refused = await post(fourth.url, listener.pc.localDescription!.sdp, { Authorization: `Bearer ${fourth.token}` });
    expect(refused.status).toBe(503);
    expect(await refused.text()).toMatch(/no RTC port left for the session's pipe transports: 6 of the 7 ports/);
    expect(counts()).toEqual(before);
    expect(await engineState(routerId)).toEqual(engineBefore);
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

describe('WHIP trickle ICE by PATCH (werift)', () => {
  /** Packets the relay's producers have received so far, per producer. */
  async function producerPackets(routerId: string): Promise<number[]> {
    const state = await call('GET', `/internal/v1/routers/${routerId}`);
    const producers = (state.body!.transports as { producers: { id: string }[] }[]).flatMap((tr) => tr.producers);
    const out: number[] = [];
    for (const producer of producers) out.push(((await call('GET', `/internal/v1/producers/${producer.id}/stats`)).list[0] as { packetCount?: number } | undefined)?.packetCount ?? 0);
    return out;
  }

  it('connects with the candidates trickled by PATCH after an offer without any (a fragment under the session\'s ufrag is no restart)', { timeout: 40_000 }, async () => {
    const routerId = await newRouter();
    const endpoint = await mint('whip', { routerId });
    const auth = { Authorization: `Bearer ${endpoint.token}` };
    const publisher = await publisherOffer();
    const lines = publisher.sdp.split('\r\n');
    const candidates = lines.filter((line) => line.startsWith('a=candidate:'));
    expect(candidates.length).toBeGreaterThan(0);
    const res = await post(endpoint.url, lines.filter((line) => !line.startsWith('a=candidate:') && line !== 'a=end-of-candidates').join('\r\n'), auth);
    expect(res.status).toBe(201);
    const answer = await res.text();
    const location = res.headers.get('location')!;
    const patch = (etag: string, body: string) => t.app.request(location, { method: 'PATCH', headers: { ...auth, 'Content-Type': 'application/trickle-ice-sdpfrag', 'If-Match': etag }, body });
    const ufrag = /^a=ice-ufrag:(.+)$/m.exec(publisher.sdp)![1]!.trim();
    const pwd = /^a=ice-pwd:(.+)$/m.exec(publisher.sdp)![1]!.trim();
    // The trickled fragment (RFC 8840): the session's ufrag and pwd, then the candidates.
    const trickled = await patch(res.headers.get('etag')!, [`a=ice-ufrag:${ufrag}`, `a=ice-pwd:${pwd}`, 'm=audio 9 UDP/TLS/RTP/SAVPF 0', 'a=mid:0', ...candidates, 'a=end-of-candidates', ''].join('\r\n'));
    expect(trickled.status).toBe(204);
    await publisher.pc.setRemoteDescription({ type: 'answer', sdp: answer });
    await waitFor(() => publisher.pc.connectionState === 'connected', { timeoutMs: 20_000, what: 'the publisher to connect' });
    startSending(publisher.audio, publisher.video);
    await waitFor(async () => (await producerPackets(routerId)).every((n) => n > 10), { timeoutMs: 20_000, what: 'RTP at the producers' });

    // A new ufrag without its pwd is no restart the relay can take.
    expect((await patch(trickled.headers.get('etag')!, 'a=ice-ufrag:abcd\r\n')).status).toBe(400);
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

describe('WHIP refusals', () => {
  it('answers each refusal with its status and leaves nothing behind', { timeout: 20_000 }, async () => {
    const routerId = await newRouter();
    const endpoint = await mint('whip', { routerId, ttlS: 10 });
    const auth = { Authorization: `Bearer ${endpoint.token}` };
    const { sdp } = await publisherOffer();
    const revoked = await mint('whip', { routerId });
    expect((await call('DELETE', `/internal/v1/whip-endpoints/${revoked.id}`)).status).toBe(204);
    const whep = await mint('whep', { routerId });
    const before = counts();
    const path = new URL(endpoint.url).pathname;

    // A revoked endpoint is gone: 404, its token included.
    expect((await post(revoked.url, sdp, { Authorization: `Bearer ${revoked.token}` })).status).toBe(404);
    // WHEP: no token, garbage, and an offer with no receiving section.
    expect((await post(whep.url, sdp, {})).status).toBe(401);
    expect((await post(whep.url, 'v=0\r\ngarbage', { Authorization: `Bearer ${whep.token}` })).status).toBe(400);
    expect((await post(whep.url, sdp, { Authorization: `Bearer ${whep.token}` })).status).toBe(422);

    const noToken = await post(endpoint.url, sdp, { Origin: 'https://player.example' });
    expect(noToken.status).toBe(401);
    // A refusal carries the CORS headers too, so a page can read it.
    expect(noToken.headers.get('access-control-allow-origin')).toBe('*');
    expect(noToken.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await post(endpoint.url, sdp, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await t.app.request(path, { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: sdp })).status).toBe(415);
    expect((await post(endpoint.url, 'garbage', auth)).status).toBe(400);
    const many = sdp + Array.from({ length: 200 }, (_, i) => `m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:x${i}\r\na=sendonly\r\na=rtpmap:111 opus/48000/2\r\n`).join('');
    const tooMany = await post(endpoint.url, many, auth);
    expect(tooMany.status).toBe(400);
    expect(await tooMany.text()).toMatch(/media sections/);
    const h265 = sdp.replace(/opus\/48000\/2/g, 'G7221/16000').replace(/VP8\/90000/g, 'H265/90000');
    expect((await post(endpoint.url, h265, auth)).status).toBe(422);
    expect((await post(`http://x/whip/${'0'.repeat(36)}`, sdp, auth)).status).toBe(404);
    expect((await t.app.request(path, { method: 'GET' })).status).toBe(405);
    const preflight = await t.app.request(path, { method: 'OPTIONS', headers: { Origin: 'https://obs.example', 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');

    // PATCH with a stale ETag: 412, and the session it names is as it was (then ended by DELETE).
    const opened = await post(endpoint.url, sdp, auth);
    expect(opened.status).toBe(201);
    const during = counts();
    const session = opened.headers.get('location')!;
    const stale = await t.app.request(session, { method: 'PATCH', headers: { ...auth, 'Content-Type': 'application/trickle-ice-sdpfrag', 'If-Match': '"stale"' }, body: 'a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwxyz\r\n' });
    expect(stale.status).toBe(412);
    expect(counts()).toEqual(during);
    expect((await t.app.request(session, { method: 'DELETE', headers: auth })).status).toBe(200);
    await waitFor(() => JSON.stringify(counts()) === JSON.stringify(before), { timeoutMs: 3000, what: 'the session to close' });

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 11_000 });
    try {
      expect((await post(endpoint.url, sdp, auth)).status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
    expect(counts()).toEqual(before);
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

describe('WHIP offers fuzzed', () => {
  it('answers a mutated offer with 201, 400 or 422 (never a 5xx), and a failed one leaves nothing behind', { timeout: 30_000 }, async () => {
    const routerId = await newRouter();
    const endpoint = await mint('whip', { routerId });
    const auth = { Authorization: `Bearer ${endpoint.token}` };
    const { sdp } = await publisherOffer();
    const lines = sdp.split('\r\n').filter(Boolean);
    const hostile = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('a=ssrc:4294967296 cname:x', 'a=rid:' + 'r'.repeat(300) + ' send', 'a=extmap:999 urn:ietf:params:rtp-hdrext:sdes:mid', 'a=rtpmap:300 VP8/90000', 'a=fmtp:96 ' + 'x=1;'.repeat(500), 'a=mid:' + 'm'.repeat(100), 'a=simulcast:send a;b;c', 'a=setup:holdconn', 'a=fingerprint:md5 00', 'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=rtpmap:96 VP8/0', 'a=candidate:1 1 udp 1 127.0.0.1 9 typ host'),
    );
    const mutatedOffer = fc
      .array(fc.oneof(fc.record({ op: fc.constant('drop' as const), at: fc.nat() }), fc.record({ op: fc.constant('insert' as const), at: fc.nat(), line: hostile }), fc.record({ op: fc.constant('dup' as const), at: fc.nat() })), { minLength: 1, maxLength: 6 })
      .map((edits) => {
        const out = [...lines];
        for (const edit of edits) {
          const at = edit.at % out.length;
          if (edit.op === 'drop') out.splice(at, 1);
          else if (edit.op === 'dup') out.splice(at, 0, out[at]!);
          else out.splice(at, 0, edit.line);
        }
        return `${out.join('\r\n')}\r\n`;
      });
    const before = counts();
    await fc.assert(
      fc.asyncProperty(mutatedOffer, async (offer) => {
        const res = await post(endpoint.url, offer, auth);
        const text = await res.text();
        expect([201, 400, 422], `${res.status} ${text}\n${offer}`).toContain(res.status);
        if (res.status === 201) {
          const ended = await t.app.request(res.headers.get('location')!, { method: 'DELETE', headers: auth });
          expect(ended.status).toBe(200);
        }
        await waitFor(() => counts().transports === before.transports && counts().producers === before.producers, { timeoutMs: 2000, what: 'nothing left behind' });
      }),
      fuzzParameters(Number(process.env.WHIP_FUZZ_RUNS ?? 60)),
    );
    await call('DELETE', `/internal/v1/routers/${routerId}`);
  });
});

// Last in the file: a drain is not undone.
describe('WHIP and WHEP while draining', () => {
  it('answers 503 to a new session and to minting, and leaves nothing behind', async () => {
    const routerId = await newRouter();
    const whip = await mint('whip', { routerId });
    const whep = await mint('whep', { routerId });
    const { sdp } = await publisherOffer();
    const listener = player();
    await listener.pc.setLocalDescription(await listener.pc.createOffer());
    const before = counts();
    expect((await call('POST', '/internal/v1/drain')).status).toBe(202);
    const refused = await post(whip.url, sdp, { Authorization: `Bearer ${whip.token}` });
    expect(refused.status).toBe(503);
    expect(await refused.text()).toMatch(/draining/);
    expect((await post(whep.url, listener.pc.localDescription!.sdp, { Authorization: `Bearer ${whep.token}` })).status).toBe(503);
    const minting = await call('POST', '/internal/v1/whip-endpoints', { routerId });
    expect(minting.status).toBe(503);
    expect(minting.body).toMatchObject({ code: 'DRAINING' });
    expect(counts()).toEqual(before);
  });
});
