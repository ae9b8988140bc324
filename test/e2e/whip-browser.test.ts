// A real browser publishing and another playing: a Chromium page sends its fake camera and microphone
// with a fetch-based WHIP client (no SDK), the relay's producers count its RTP; a second page plays the
// room with a fetch-based WHEP client and decodes it (frames decoded, audio energy in its getStats).
// Chromium drops RTP whose payload type its offer did not give the codec: the player decoding anything
// shows the session's router answered and sent with the offer's types. A page playing an empty room
// decodes the camera published after it; an ICE restart by PATCH moves the publisher's checks to the relay's new credentials
// while its RTP goes on; the recording API records a WHIP publisher (ffprobe reads
// one video and one audio stream back); a simulcast publisher (three rids at 720p) is one producer of
// three encodings, and its WHEP consumer switches between spatial layers 0 and 2.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import { allocateRtcPorts, buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';
import { ffprobe } from '../support/ffmpeg.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { launchChromium, requireChromium, type LaunchedChromium } from '../support/browser.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

let t: TestApp;
let server: ServerType | undefined;
let browser: LaunchedChromium | undefined;
let base = '';
let dir = '';
/** The pages a test opened: closed after it, so that no encoder of an earlier test loads the next one. */
const pages: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  // The WebRtcServer's port and fifteen for the PipeTransports to the WHEP sessions' routers (two each)
  // and the recording's plain transports (two each, RTCP apart).
  const ports = allocateRtcPorts(16);
  dir = mkdtempSync(join(tmpdir(), 'whip-recordings-'));
  t = await buildTestApp({ RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max), RECORDINGS_DIR: dir, RECORDINGS_MIN_FREE_MB: '1' });
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 30_000);

afterEach(async () => {
  for (const page of pages.splice(0)) await page.close().catch(() => {});
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function internal(path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${base}/internal/v1${path}`, { method: 'POST', headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, string>;
}

/** Runs in the page: the whole WHIP/WHEP client is fetch and RTCPeerConnection. */
const CLIENT = `
window.whipPublish = async (url, token) => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 320, height: 240 } });
  const pc = new RTCPeerConnection();
  for (const track of stream.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  const res = await fetch(url, { method: 'POST', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/sdp' }, body: pc.localDescription.sdp });
  const answer = await res.text();
  if (res.status !== 201) return { status: res.status, answer };
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  window.pc = pc;
  window.answer = answer;
  return { status: res.status, location: res.headers.get('Location'), etag: res.headers.get('ETag') };
};
const iceOf = (sdp) => ({ ufrag: /^a=ice-ufrag:(.+)$/m.exec(sdp)[1].trim(), pwd: /^a=ice-pwd:(.+)$/m.exec(sdp)[1].trim() });
// An ICE restart by PATCH (RFC 9725 4.3.2): the new offer's ufrag, pwd and candidates as a
// trickle-ice-sdpfrag; the answer fragment's ufrag and pwd replace the relay's in the remote description.
window.whipRestart = async (url, token, location, etag) => {
  const pc = window.pc;
  pc.restartIce();
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
  });
  const local = iceOf(pc.localDescription.sdp);
  const mid = /^a=mid:(.+)$/m.exec(pc.localDescription.sdp)[1].trim();
  const candidates = [...new Set(pc.localDescription.sdp.match(/^a=candidate:.*$/gm) || [])];
  const fragment = ['a=ice-ufrag:' + local.ufrag, 'a=ice-pwd:' + local.pwd, 'm=audio 9 UDP/TLS/RTP/SAVPF 0', 'a=mid:' + mid, ...candidates, 'a=end-of-candidates', ''].join('\\r\\n');
  const res = await fetch(new URL(location, url), { method: 'PATCH', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/trickle-ice-sdpfrag', 'If-Match': etag }, body: fragment });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, text };
  const relay = iceOf(text);
  const before = iceOf(window.answer);
  window.answer = window.answer.replaceAll('a=ice-ufrag:' + before.ufrag, 'a=ice-ufrag:' + relay.ufrag).replaceAll('a=ice-pwd:' + before.pwd, 'a=ice-pwd:' + relay.pwd);
  await pc.setRemoteDescription({ type: 'answer', sdp: window.answer });
  return { status: res.status, etag: res.headers.get('ETag'), relayUfrag: relay.ufrag, oldRelayUfrag: before.ufrag };
};
// The selected pair and the ufrag of its remote candidate (which credentials its checks succeeded with).
window.selectedPair = async () => {
  const stats = [...(await window.pc.getStats()).values()];
  const transport = stats.find((s) => s.type === 'transport' && s.selectedCandidatePairId);
  const pair = transport && stats.find((s) => s.id === transport.selectedCandidatePairId);
  const remote = pair && stats.find((s) => s.id === pair.remoteCandidateId);
  return { ice: window.pc.iceConnectionState, pairState: pair ? pair.state : null, responsesReceived: pair ? pair.responsesReceived : 0, remoteUfrag: remote ? remote.usernameFragment : null, changes: transport ? transport.selectedCandidatePairChanges : 0 };
};
window.whipPublishSimulcast = async (url, token) => {
  // Chromium sends three VP8 layers from 960x540 up (two at 640x480). At 15 frames a second the three encoders leave
  // CPU to spare, so that a loaded machine does not make Chromium scale the input down and drop a layer.
  const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 1280, height: 720, frameRate: 15 } });
  const pc = new RTCPeerConnection();
  pc.addTransceiver(stream.getVideoTracks()[0], { direction: 'sendonly', sendEncodings: [{ rid: 'q', scaleResolutionDownBy: 4 }, { rid: 'h', scaleResolutionDownBy: 2 }, { rid: 'f' }] });
  await pc.setLocalDescription(await pc.createOffer());
  const res = await fetch(url, { method: 'POST', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/sdp' }, body: pc.localDescription.sdp });
  const answer = await res.text();
  if (res.status !== 201) return { status: res.status, answer };
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  window.pc = pc;
  return { status: res.status };
};
window.whepPlay = async (url, token) => {
  const pc = new RTCPeerConnection();
  // Chromium decodes received audio only for a sink, and measures its level at an unmuted one: each
  // track plays in an element, as a player's would.
  pc.ontrack = (event) => {
    const element = document.createElement(event.track.kind);
    element.autoplay = true;
    element.srcObject = new MediaStream([event.track]);
    document.body.append(element);
    element.play().catch((error) => { window.playError = String(error); });
  };
  pc.addTransceiver('audio', { direction: 'recvonly' });
  pc.addTransceiver('video', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  const res = await fetch(url, { method: 'POST', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/sdp' }, body: pc.localDescription.sdp });
  const answer = await res.text();
  if (res.status !== 201) return { status: res.status, answer };
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  window.pc = pc;
  return { status: res.status, location: res.headers.get('Location') };
};
window.received = async () => {
  const out = { framesDecoded: 0, audioEnergy: 0, state: window.pc ? window.pc.connectionState : 'none' };
  if (!window.pc) return out;
  for (const s of (await window.pc.getStats()).values()) {
    if (s.type === 'inbound-rtp' && s.kind === 'video') out.framesDecoded = s.framesDecoded || 0;
    if (s.type === 'inbound-rtp' && s.kind === 'audio') out.audioEnergy = s.totalAudioEnergy || 0;
  }
  return out;
};
`;

/** A page of the test's origin with the fetch-based WHIP/WHEP client. */
async function clientPage() {
  browser ??= await launchChromium();
  const page = await browser.context.newPage();
  pages.push(page);
  await page.goto(`${base}/healthz`);
  await page.addScriptTag({ content: CLIENT });
  return page;
}

type Page = Awaited<ReturnType<typeof clientPage>>;

async function whipPublish(page: Page, endpoint: Record<string, string>) {
  return page.evaluate(([url, token]) => (globalThis as unknown as { whipPublish(u: string, t: string): Promise<{ status: number; answer?: string; location?: string }> }).whipPublish(url!, token!), [endpoint.url!.replace('http://localhost', base), endpoint.token!]);
}

async function whepPlay(page: Page, endpoint: Record<string, string>) {
  return page.evaluate(([url, token]) => (globalThis as unknown as { whepPlay(u: string, t: string): Promise<{ status: number; answer?: string }> }).whepPlay(url!, token!), [endpoint.url!.replace('http://localhost', base), endpoint.token!]);
}

/** Waits for the page's player to have decoded more than `frames` frames and some audio energy. */
async function decoded(page: Page, frames = 10) {
  await waitFor(
    async () => {
      const got = await page.evaluate(() => (globalThis as unknown as { received(): Promise<{ framesDecoded: number; audioEnergy: number }> }).received());
      return got.framesDecoded > frames && got.audioEnergy > 0;
    },
    { timeoutMs: 20_000, intervalMs: 250, what: 'frames decoded and audio energy at the WHEP player' },
  );
}

describe('WHIP and WHEP in Chromium', () => {
  it('publishes a fake camera and microphone by WHIP (RTP at both producers); another page plays them by WHEP and decodes them', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const router = await internal('/routers', {});
    const whip = await internal('/whip-endpoints', { routerId: router.id, appData: { userId: 'camera' } });

    const publisher = await clientPage();
    const published = await whipPublish(publisher, whip);
    expect(published.status, published.answer).toBe(201);

    const state = (await (await fetch(`${base}/internal/v1/routers/${router.id}`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { transports: { producers: { id: string; kind: string }[] }[] };
    const producers = state.transports[0]!.producers;
    expect(producers.map((p) => p.kind).sort()).toEqual(['audio', 'video']);
    for (const producer of producers) {
      await waitFor(
        async () => {
          const stats = (await (await fetch(`${base}/internal/v1/producers/${producer.id}/stats`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { packetCount?: number }[];
          return (stats[0]?.packetCount ?? 0) > 20;
        },
        { timeoutMs: 15_000, intervalMs: 200, what: `Chromium's RTP at the ${producer.kind} producer` },
      );
    }

    // WHEP in a second page: its offer's payload types differ from the room router's (opus 111, VP8 96
    // against 100 and 101), so decoding anything shows the answer and the RTP carry the offer's.
    const whep = await internal('/whep-endpoints', { routerId: router.id });
    const player = await clientPage();
    const played = await whepPlay(player, whep);
    expect(played.status, played.answer).toBe(201);
    await decoded(player);
    const roomCodecs = (await (await fetch(`${base}/internal/v1/routers/${router.id}`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { rtpCapabilities: { codecs: { mimeType: string; preferredPayloadType: number }[] } };
    const answerTypes = await player.evaluate(() => (globalThis as unknown as { pc: { remoteDescription: { sdp: string } } }).pc.remoteDescription.sdp.match(/^a=rtpmap:\d+ (?:opus|VP8)\/.*$/gm));
    // The test means something only if the room's types differ from the browser's.
    const roomOpus = roomCodecs.rtpCapabilities.codecs.find((c) => c.mimeType === 'audio/opus')!.preferredPayloadType;
    expect(answerTypes!.some((line: string) => line.startsWith(`a=rtpmap:${roomOpus} `))).toBe(false);
  });

  it('restarts ICE by PATCH (a new ufrag and pwd both ways) and the media goes on over the new credentials', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const router = await internal('/routers', {});
    const whip = await internal('/whip-endpoints', { routerId: router.id });
    const url = whip.url!.replace('http://localhost', base);
    const publisher = await clientPage();
    const published = (await whipPublish(publisher, whip)) as { status: number; answer?: string; location: string; etag: string };
    expect(published.status, published.answer).toBe(201);
    const state = (await (await fetch(`${base}/internal/v1/routers/${router.id}`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { transports: { producers: { id: string; kind: string }[] }[] };
    const video = state.transports[0]!.producers.find((p) => p.kind === 'video')!;
    const packets = async () => ((await (await fetch(`${base}/internal/v1/producers/${video.id}/stats`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { packetCount?: number }[])[0]?.packetCount ?? 0;
    await waitFor(async () => (await packets()) > 20, { timeoutMs: 15_000, intervalMs: 200, what: "Chromium's RTP before the restart" });
    type Pair = { ice: string; pairState: string | null; responsesReceived: number; remoteUfrag: string | null; changes: number };
    const pair = () => publisher.evaluate(() => (globalThis as unknown as { selectedPair(): Promise<Pair> }).selectedPair());

    type Restarted = { status: number; text?: string; etag: string; relayUfrag: string; oldRelayUfrag: string };
    const restarted = await publisher.evaluate(
      ([u, token, location, etag]) => (globalThis as unknown as { whipRestart(u: string, t: string, l: string, e: string): Promise<Restarted> }).whipRestart(u!, token!, location!, etag!),
      [url, whip.token!, published.location, published.etag],
    );
    expect(restarted.status, restarted.text).toBe(200);
    expect(restarted.etag).not.toBe(published.etag);
    expect(restarted.relayUfrag).not.toBe(restarted.oldRelayUfrag);
    // Chromium's checks succeed again with the relay's new credentials: the selected pair's remote
    // candidate carries the new ufrag, and it keeps getting answers.
    await waitFor(
      async () => {
        const now = await pair();
        return now.remoteUfrag === restarted.relayUfrag && now.pairState === 'succeeded' && now.ice === 'connected';
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'the selected pair on the relay\'s new ICE credentials' },
    );
    const answered = (await pair()).responsesReceived;
    await waitFor(async () => (await pair()).responsesReceived > answered, { timeoutMs: 10_000, intervalMs: 250, what: 'consent checks answered after the restart' });
    // And the media goes on.
    const after = await packets();
    await waitFor(async () => (await packets()) > after + 50, { timeoutMs: 10_000, intervalMs: 200, what: 'RTP after the restart' });
  });

  it('plays by WHEP a room that has no producer yet: the camera published afterwards is decoded', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const router = await internal('/routers', {});
    const whep = await internal('/whep-endpoints', { routerId: router.id });
    const player = await clientPage();
    const played = await whepPlay(player, whep);
    expect(played.status, played.answer).toBe(201);
    // The answer could name no SSRC: Chromium takes the stream by its payload type (one section each).
    const whip = await internal('/whip-endpoints', { routerId: router.id });
    const publisher = await clientPage();
    const published = await whipPublish(publisher, whip);
    expect(published.status, published.answer).toBe(201);
    await decoded(player);
  });

  it.skipIf(skipWithout(FFMPEG))('records a WHIP publisher with the recording API: one video and one audio stream', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const relay = createRelayClient({ baseUrl: base, token: TEST_INTERNAL_TOKEN });
    const router = await internal('/routers', {});
    const whip = await internal('/whip-endpoints', { routerId: router.id });
    const publisher = await clientPage();
    const published = await whipPublish(publisher, whip);
    expect(published.status, published.answer).toBe(201);
    const state = await relay.getRouter(router.id!);
    const producerIds = state.transports[0]!.producers.map((p) => p.id);
    expect(producerIds).toHaveLength(2);
    const recording = await relay.createRecording({ routerId: router.id!, producerIds });
    expect(recording).toMatchObject({ state: 'recording', format: 'webm' });
    await sleep(4000);
    const stopped = await relay.stopRecording(recording.id);
    const probe = await ffprobe(join(dir, stopped.file));
    expect(probe.streams.map((stream) => stream.codec_type).sort()).toEqual(['audio', 'video']);
    expect(probe.streams.find((stream) => stream.codec_type === 'video')).toMatchObject({ codec_name: 'vp8', width: 320, height: 240 });
    expect(probe.streams.find((stream) => stream.codec_type === 'audio')).toMatchObject({ codec_name: 'opus' });
    expect(probe.durationS).toBeGreaterThan(1);
  });

  it('takes a simulcast publisher (three rids) as one producer of three encodings, whose WHEP consumer switches layers', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const relay = createRelayClient({ baseUrl: base, token: TEST_INTERNAL_TOKEN });
    const router = await internal('/routers', {});
    const whip = await internal('/whip-endpoints', { routerId: router.id });
    const publisher = await clientPage();
    const published = await publisher.evaluate(([url, token]) => (globalThis as unknown as { whipPublishSimulcast(u: string, t: string): Promise<{ status: number; answer?: string }> }).whipPublishSimulcast(url!, token!), [whip.url!.replace('http://localhost', base), whip.token!]);
    expect(published.status, published.answer).toBe(201);
    const producer = (await relay.getRouter(router.id!)).transports[0]!.producers[0]!;
    expect(producer).toMatchObject({ kind: 'video' });
    // Each of the three encodings is identified by its rid and carries RTP.
    await waitFor(
      async () => {
        const stats = (await relay.producerStats(producer.id)) as { rid?: string; packetCount?: number }[];
        return stats.length === 3 && stats.every((s) => (s.packetCount ?? 0) > 0) && new Set(stats.map((s) => s.rid)).size === 3;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'RTP on the three encodings' },
    );

    const whep = await internal('/whep-endpoints', { routerId: router.id, producerIds: [producer.id] });
    const player = await clientPage();
    const played = await whepPlay(player, whep);
    expect(played.status, played.answer).toBe(201);
    const session = (await relay.getRouter(router.id!)).whepEndpoints[0]!.sessions[0]!;
    const consumer = (await relay.getRouter(router.id!)).transports.find((tr) => tr.id === session.transportId)!.consumers[0]!;
    // The player first connects and decodes (on a loaded machine its ICE and DTLS can take seconds): only then does
    // a layer switch say something about the relay.
    await waitFor(async () => (await player.evaluate(() => (globalThis as unknown as { received(): Promise<{ framesDecoded: number }> }).received())).framesDecoded > 10, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'frames decoded at the WHEP player',
    });
    for (const spatialLayer of [0, 2, 0]) {
      let seen: unknown;
      await waitFor(
        async () => {
          const answer = await relay.setConsumerPreferredLayers(consumer.id, { spatialLayer });
          seen = answer.currentLayers;
          return answer.currentLayers?.spatialLayer === spatialLayer;
        },
        { timeoutMs: 20_000, intervalMs: 500, what: `the consumer forwarding spatial layer ${spatialLayer}` },
      ).catch(async (error: Error) => {
        const stats = await relay.producerStats(producer.id).catch(() => undefined);
        throw new Error(`${error.message}; last current layers ${JSON.stringify(seen)}; producer stats ${JSON.stringify(stats)}`);
      });
    }
  });
});
