// Issue 28: a call from a network that lets nothing through to the relay's media ports. The client
// side is its own network namespace (a veth to the root namespace, where the relay and a private
// coturn listen on the veth's address); an nftables rule in it drops every packet to the relay's RTC
// ports. Chromium runs inside the namespace (`ip netns exec`). Without TURN its transports never
// connect; with the credentials from GET /api/v1/auth/ice-servers and iceTransportPolicy 'relay',
// audio and video flow both ways through coturn, once over each of turn: UDP, turn: TCP and turns: TLS.
// Everything made here (namespace, veth, nft table, coturn, browsers, the wrapper script) goes in afterAll.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser } from '../../examples/browser-demo/start.js';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import { call, register } from '../accounts/helpers.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { CHROMIUM, launchChromium, requireChromium, type LaunchedChromium } from '../support/browser.js';
import { relaySignal, until } from '../support/calls-page.js';
import { startCoturn, type Coturn } from '../support/coturn.js';
import { makeClientNamespace, type ClientNamespace } from '../support/netns.js';
import { NFTABLES, skipWithout, TURN_SERVER } from '../support/system-programs.js';

const PAGE_ORIGIN = 'http://127.0.0.1:9';
const PAGE_SCRIPT = new URL('../browser/turn-page.ts', import.meta.url).pathname;
const SECRET = 'turn-relay-test-secret-0123456789';
/**
 * How long a transport that cannot reach the relay is watched before "never connects" is asserted:
 * three times and more the 1.5 s the same tab's transports take to connect through coturn below.
 */
const NO_TURN_WATCH_MS = 5_000;

/** RTCIceServer and RTCIceTransportPolicy as the page takes them (no DOM types in the test's tsconfig). */
type IceServer = { urls: string[]; username: string; credential: string };
type Opened = { sendTransportId: string; recvTransportId: string; producerIds: string[]; consumerIds: string[] };
type Selected = { candidateType: string; relayProtocol: string; protocol: string } | null;
type PageWindow = {
  turnCall: {
    open(iceServers: IceServer[], policy: 'all' | 'relay'): Promise<Opened>;
    states(): { send: string; recv: string };
    inbound(): Promise<{ audio: number; video: number }>;
    selected(): Promise<{ send: Selected; recv: Selected }>;
    close(): void;
  };
};

/** Root, `ip` and `nft`: what making the client's namespace and its firewall takes. */
function namespacesPossible(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

const missing = skipWithout(TURN_SERVER) || skipWithout(NFTABLES);
if (!missing && !namespacesPossible()) console.warn('the relayed-call test needs root (network namespaces, nftables): skipped');

describe.skipIf(missing || !namespacesPossible())('a relayed call through coturn from a firewalled network namespace', () => {
  let ns: ClientNamespace | undefined;
  let coturn: Coturn | undefined;
  let t: TestApp | undefined;
  let relay: RelayClient;
  let wrapperDir: string | undefined;
  let wrapper: string;
  let script: string;
  let rtc: { min: number; max: number };
  const browsers: LaunchedChromium[] = [];
  const routers: string[] = [];

  beforeAll(async () => {
    ns = makeClientNamespace();
    coturn = await startCoturn({ ip: ns.hostIp, secret: SECRET, allowedPeers: [ns.hostIp] });
    rtc = allocateRtcPorts(1);
    t = await buildTestApp({
      MEDIASOUP_LISTEN_IP: ns.hostIp,
      RTC_MIN_PORT: String(rtc.min),
      RTC_MAX_PORT: String(rtc.max),
      TURN_URLS: [coturn.urls.udp, coturn.urls.tcp, coturn.urls.tls].join(','),
      TURN_SECRET: SECRET,
      TURN_CREDENTIAL_TTL_S: '600',
    });
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    // The client's firewall: nothing reaches the relay's media ports, UDP or TCP (coturn's ports stay open).
    ns.nft(
      [
        'table inet turn_test {',
        '  chain output {',
        '    type filter hook output priority 0; policy accept;',
        `    ip daddr ${ns.hostIp} udp dport ${rtc.min}-${rtc.max} drop`,
        `    ip daddr ${ns.hostIp} tcp dport ${rtc.min}-${rtc.max} drop`,
        '  }',
        '}',
      ].join('\n'),
    );
    // Playwright starts this instead of Chromium: the same browser, inside the namespace. coturn's
    // certificate is self-signed; Chromium trusts that one key for turns: (and nothing else) by its
    // SPKI hash, as it would trust a CA-signed certificate of a real deployment.
    wrapperDir = mkdtempSync(path.join(tmpdir(), 'chromium-netns-'));
    wrapper = path.join(wrapperDir, 'chromium');
    writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${ns.netns} ${CHROMIUM} --ignore-certificate-errors-spki-list=${coturn.spkiSha256} "$@"\n`);
    chmodSync(wrapper, 0o755);
    script = await bundleForBrowser(PAGE_SCRIPT);
  }, 120_000);

  afterAll(async () => {
    for (const browser of browsers) await browser.close().catch(() => {});
    for (const id of routers) await relay?.closeRouter(id).catch(() => {});
    await t?.close();
    await coturn?.stop();
    ns?.cleanup();
    if (wrapperDir) rmSync(wrapperDir, { recursive: true, force: true });
  }, 60_000);

  /** A tab in the namespace with the page loaded and window.signal wired to the relay. */
  async function openTab(label: string): Promise<{ page: Page; lines: string[] }> {
    const browser = await launchChromium({ viewport: { width: 700, height: 500 }, executablePath: wrapper });
    browsers.push(browser);
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const lines: string[] = [];
    page.on('console', (m) => lines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => lines.push(`pageerror: ${e.message}`));
    await page.route(`${PAGE_ORIGIN}/**`, (route) =>
      route.fulfill(
        route.request().url().endsWith('/turn.js')
          ? { contentType: 'text/javascript', body: script }
          : { contentType: 'text/html', body: '<!doctype html><meta charset="utf-8"><body><script type="module" src="/turn.js"></script></body>' },
      ),
    );
    await page.exposeFunction('signal', relaySignal(relay, { appData: { test: `turn-relay ${label}` }, router: (id) => routers.push(id) }).handle);
    await page.goto(`${PAGE_ORIGIN}/`);
    await page.waitForFunction(() => 'turnCall' in globalThis, null, { timeout: 15_000 });
    return { page, lines };
  }

  /** Packets the relay received from the tab, over both producers. */
  async function relayReceived(producerIds: string[]): Promise<number> {
    let packets = 0;
    for (const id of producerIds) for (const s of (await relay.producerStats(id)) as Array<Record<string, any>>) packets += Number(s.packetCount ?? 0);
    return packets;
  }

  it('without TURN the transports never connect: the firewall drops everything to the media ports', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const { page, lines } = await openTab('no turn');
    try {
      // Every ICE candidate ever offered (the relay's host candidates), nothing to reach them through.
      const opened = await page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.open([], 'all'));
      await new Promise((r) => setTimeout(r, NO_TURN_WATCH_MS));
      const states = await page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.states());
      expect(states.send).not.toBe('connected');
      expect(states.recv).not.toBe('connected');
      for (const id of [opened.sendTransportId, opened.recvTransportId]) {
        const [stats] = (await relay.transportStats(id)) as Array<Record<string, any>>;
        // Not one STUN check arrived: the relay never saw the client.
        expect(stats).toMatchObject({ iceState: 'new', dtlsState: 'new' });
      }
      expect(await relayReceived(opened.producerIds)).toBe(0);
      await page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.close());
    } catch (error) {
      console.error(`browser console:\n${lines.join('\n')}`);
      throw error;
    }
  });

  for (const transport of ['udp', 'tcp', 'tls'] as const) {
    it(`with TURN (turn${transport === 'tls' ? 's' : ''}: ${transport.toUpperCase()}), relay only: audio and video flow both ways through coturn`, { timeout: 120_000 }, async (ctx) => {
      requireChromium(ctx);
      const started = performance.now();
      // The credentials a client gets: GET /api/v1/auth/ice-servers with its access token.
      const user = await register(t!.app);
      const reply = await call(t!.app, 'GET', '/ice-servers', { token: user.tokens.token });
      expect(reply.status).toBe(200);
      const [server] = reply.body.data.ice_servers;
      const url = coturn!.urls[transport];
      expect(server!.urls).toContain(url);
      // Only this URL, so that the call can go no other way.
      const iceServers = [{ urls: [url], username: server!.username, credential: server!.credential }];
      const { page, lines } = await openTab(transport);
      try {
        const opened = await page.evaluate(([servers]) => (globalThis as unknown as PageWindow).turnCall.open(servers, 'relay'), [iceServers] as const);
        await until(() => page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.states()), (s) => s.send === 'connected' && s.recv === 'connected', 45_000, 'both transports connected');
        const connectedMs = Math.round(performance.now() - started);
        // Both ICE pairs run over a relay candidate, reaching coturn the way asked for.
        const selected = await page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.selected());
        for (const side of [selected.send, selected.recv]) expect(side).toMatchObject({ candidateType: 'relay', relayProtocol: transport });
        // Media both ways: the relay counts what the tab sends, the tab counts what the relay sends back.
        const relayBefore = await relayReceived(opened.producerIds);
        const tabBefore = await until(() => page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.inbound()), (c) => c.audio > 0 && c.video > 0, 20_000, 'inbound audio and video at the tab');
        // Until both counts have moved on (polled, at most 20 s) rather than a fixed 2 s window.
        const { relayAfter, tabAfter } = await until(
          async () => ({ relayAfter: await relayReceived(opened.producerIds), tabAfter: await page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.inbound()) }),
          (c) => c.relayAfter > relayBefore && c.tabAfter.audio > tabBefore.audio && c.tabAfter.video > tabBefore.video,
          20_000,
          'more media both ways',
        );
        expect(relayAfter).toBeGreaterThan(relayBefore);
        expect(tabAfter.audio).toBeGreaterThan(tabBefore.audio);
        expect(tabAfter.video).toBeGreaterThan(tabBefore.video);
        for (const id of [opened.sendTransportId, opened.recvTransportId]) {
          const [stats] = (await relay.transportStats(id)) as Array<Record<string, any>>;
          expect(stats).toMatchObject({ dtlsState: 'connected' });
          // The relay sees coturn's relayed address, never the client's own.
          expect(String(stats!.iceSelectedTuple?.remoteIp)).toBe(ns!.hostIp);
        }
        console.info('turn relayed call', JSON.stringify({ transport, connectedMs, selected, relay: [relayBefore, relayAfter], tab: [tabBefore, tabAfter] }));
        await page.evaluate(() => (globalThis as unknown as PageWindow).turnCall.close());
      } catch (error) {
        console.error(`browser console:\n${lines.join('\n')}\ncoturn log:\n${coturn!.log().split('\n').slice(-40).join('\n')}`);
        throw error;
      }
    });
  }
});
