// A real browser publishing: a Chromium page sends its fake camera and microphone with a fetch-based
// WHIP client (no SDK); the relay's producers must count its RTP. (Playing in Chromium by WHEP is not
// tested: a consumer sends with the room router's payload types, which a browser drops unless its
// offer used the same ones; docs/media-relay.md "WHIP and WHEP".)
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';
import { launchChromium, requireChromium, type LaunchedChromium } from '../support/browser.js';
import { waitFor } from '../support/webrtc/wait.js';

let t: TestApp;
let server: ServerType | undefined;
let browser: LaunchedChromium | undefined;
let base = '';

beforeAll(async () => {
  t = await buildTestApp();
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
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
  return { status: res.status, location: res.headers.get('Location'), etag: res.headers.get('ETag') };
};
window.whepPlay = async (url, token) => {
  const pc = new RTCPeerConnection();
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

describe('WHIP in Chromium', () => {
  it('publishes a fake camera and microphone by WHIP: RTP at the audio and the video producer', { timeout: 60_000 }, async (ctx) => {
    requireChromium(ctx);
    browser = await launchChromium();
    const router = await internal('/routers', {});
    const whip = await internal('/whip-endpoints', { routerId: router.id, appData: { userId: 'camera' } });

    const publisher = await browser.context.newPage();
    await publisher.goto(`${base}/healthz`);
    await publisher.addScriptTag({ content: CLIENT });
    const published = await publisher.evaluate(([url, token]) => (globalThis as unknown as { whipPublish(u: string, t: string): Promise<{ status: number; answer?: string }> }).whipPublish(url!, token!), [whip.url!.replace('http://localhost', base), whip.token!]);
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
  });
});
