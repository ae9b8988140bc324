// The TURN credentials of a WHIP answer work: a private coturn (the shipped configuration, relaying to
// the relay's media address only), the service with TURN_URLS and TURN_SECRET, and a Chromium page
// that publishes with `iceTransportPolicy: 'relay'` using nothing but what the `Link` headers gave:
// the relay's producers count its RTP and the page's selected candidate pair is a relayed one.
// A WHIP client learns the ICE servers from an answer (RFC 9725 §4.6); one that must go through TURN
// from its first packet keeps them from an earlier session, as this page does: a first POST gives the
// Link headers, its session is deleted, and the publisher connects with them.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRtcPorts, buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';
import { launchChromium, requireChromium, type LaunchedChromium } from '../support/browser.js';
import { shippedRelayPorts, startCoturn, TURN_SERVER, type Coturn } from '../support/coturn.js';
import { skipWithout } from '../support/system-programs.js';
import { waitFor } from '../support/webrtc/wait.js';

const SECRET = 'whip-turn-test-secret-0123456789';

/** Runs in the page: fetch and RTCPeerConnection only. */
const CLIENT = `
const post = (url, token, sdp) => fetch(url, { method: 'POST', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/sdp' }, body: sdp });
/** RFC 8288 Link headers of rel="ice-server" as RTCIceServers (the WHIP client's side of RFC 9725 §4.6). */
const iceServersOf = (res) => {
  const servers = [];
  for (const link of (res.headers.get('Link') || '').split(/,(?=\\s*<)/)) {
    const url = /<([^>]+)>/.exec(link);
    if (!url || !/rel="ice-server"/.test(link)) continue;
    const username = /username="([^"]*)"/.exec(link);
    const credential = /credential="([^"]*)"/.exec(link);
    servers.push({ urls: url[1], username: username && username[1], credential: credential && credential[1] });
  }
  return servers;
};
const gathered = (pc) => new Promise((resolve) => {
  if (pc.iceGatheringState === 'complete') return resolve();
  pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
});
window.learnIceServers = async (url, token) => {
  const pc = new RTCPeerConnection();
  pc.addTransceiver('audio', { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  const res = await post(url, token, pc.localDescription.sdp);
  pc.close();
  const servers = iceServersOf(res);
  const location = res.headers.get('Location');
  await res.text();
  // That session is not needed: the token's endpoint takes one publisher at a time.
  const ended = await fetch(new URL(location, url), { method: 'DELETE', headers: { Authorization: 'Bearer ' + token } });
  return { status: res.status, ended: ended.status, servers };
};
window.publishRelayed = async (url, token, iceServers) => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 320, height: 240 } });
  const pc = new RTCPeerConnection({ iceServers, iceTransportPolicy: 'relay' });
  for (const track of stream.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const res = await post(url, token, pc.localDescription.sdp);
  const answer = await res.text();
  if (res.status !== 201) return { status: res.status, answer, candidates: 0 };
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  window.pc = pc;
  return { status: res.status, answer: '', candidates: (pc.localDescription.sdp.match(/^a=candidate:/gm) || []).length, relayed: (pc.localDescription.sdp.match(/ typ relay /g) || []).length };
};
window.selectedPair = async () => {
  const stats = [...(await window.pc.getStats()).values()];
  const transport = stats.find((s) => s.type === 'transport' && s.selectedCandidatePairId);
  const pair = transport && stats.find((s) => s.id === transport.selectedCandidatePairId);
  const local = pair && stats.find((s) => s.id === pair.localCandidateId);
  return { state: window.pc.connectionState, local: local ? { candidateType: local.candidateType, relayProtocol: local.relayProtocol || null } : null };
};
`;

describe.skipIf(skipWithout(TURN_SERVER))('WHIP through the TURN server its Link headers name', () => {
  let coturn: Coturn;
  let t: TestApp;
  let server: ServerType | undefined;
  let browser: LaunchedChromium | undefined;
  let base = '';

  beforeAll(async () => {
    coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, mediaIp: '127.0.0.1' });
    const ports = allocateRtcPorts(2);
    t = await buildTestApp({ RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max), TURN_URLS: coturn.urls.udp, TURN_SECRET: SECRET });
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.close();
    await coturn?.stop();
  });

  async function internal(path: string, body: unknown): Promise<Record<string, string>> {
    const res = await fetch(`${base}/internal/v1${path}`, { method: 'POST', headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, string>;
  }

  it("a relay-only Chromium publisher connects with the answer's TURN credentials; its RTP reaches the producers", { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const router = await internal('/routers', {});
    const whip = await internal('/whip-endpoints', { routerId: router.id });
    const url = whip.url!.replace('http://localhost', base);
    browser = await launchChromium();
    const page = await browser.context.newPage();
    await page.goto(`${base}/healthz`);
    await page.addScriptTag({ content: CLIENT });
    type Learned = { status: number; ended: number; servers: { urls: string; username: string; credential: string }[] };
    const learned = await page.evaluate(([u, token]) => (globalThis as unknown as { learnIceServers(u: string, t: string): Promise<Learned> }).learnIceServers(u!, token!), [url, whip.token!]);
    expect(learned).toMatchObject({ status: 201, ended: 200 });
    expect(learned.servers).toEqual([{ urls: coturn.urls.udp, username: expect.stringMatching(/^\d+:/), credential: expect.any(String) }]);

    type Published = { status: number; answer: string; candidates: number; relayed: number };
    const published = await page.evaluate(
      ([u, token, servers]) => (globalThis as unknown as { publishRelayed(u: string, t: string, s: unknown): Promise<Published> }).publishRelayed(u, token, servers),
      [url, whip.token!, learned.servers] as const,
    );
    expect(published.status, published.answer).toBe(201);
    // Only relayed candidates were offered: the media can only come through coturn.
    expect(published.relayed).toBeGreaterThan(0);
    expect(published.relayed).toBe(published.candidates);

    const state = (await (await fetch(`${base}/internal/v1/routers/${router.id}`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { transports: { id: string; producers: { id: string; kind: string }[] }[] };
    const producers = state.transports.at(-1)!.producers;
    expect(producers.map((p) => p.kind).sort()).toEqual(['audio', 'video']);
    for (const producer of producers) {
      await waitFor(
        async () => {
          const stats = (await (await fetch(`${base}/internal/v1/producers/${producer.id}/stats`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { packetCount?: number }[];
          return (stats[0]?.packetCount ?? 0) > 20;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: `RTP through coturn at the ${producer.kind} producer:\n${coturn.log().slice(-2000)}` },
      );
    }
    const selected = await page.evaluate(() => (globalThis as unknown as { selectedPair(): Promise<{ state: string; local: { candidateType: string; relayProtocol: string | null } | null }> }).selectedPair());
    expect(selected).toEqual({ state: 'connected', local: { candidateType: 'relay', relayProtocol: 'udp' } });
    // coturn made the allocation with the service's credential (its log names the session).
    // And the relay's side: its transport's selected tuple is an address coturn relays from.
    const transport = (await (await fetch(`${base}/internal/v1/transports/${state.transports.at(-1)!.id}/stats`, { headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN } })).json()) as { iceSelectedTuple?: { remoteIp: string; remotePort: number } }[];
    const tuple = transport[0]?.iceSelectedTuple;
    const relayPorts = shippedRelayPorts();
    expect(tuple?.remoteIp).toBe(coturn.ip);
    expect(tuple!.remotePort).toBeGreaterThanOrEqual(relayPorts.min);
    expect(tuple!.remotePort).toBeLessThanOrEqual(relayPorts.max);
  });
});
