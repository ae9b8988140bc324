// A call from a network that lets nothing through to the relay's media ports. The client side is its
// own network namespace (a veth to the root namespace, where the relay and a private coturn with the
// shipped configuration listen on the veth's address); an nftables rule in it drops every packet to the
// relay's RTC ports. Chromium runs inside the namespace (`ip netns exec`). Without TURN its transports
// never connect; with the credentials from GET /api/v1/auth/ice-servers and iceTransportPolicy 'relay',
// audio and video flow both ways through coturn, once over each of turn: UDP, turn: TCP and turns: TLS.
// And coturn relays to nothing else: a host standing for one on the internet (an address of the
// namespace routed from the root namespace, with a UDP echo and a TCP banner server) is reachable
// directly, but not through coturn, neither over UDP (403, nothing sent) nor TCP (no TCP relay).
// Everything made here (namespace, veth, route, nft table, coturn, servers, browsers, the wrapper
// script) goes in afterAll.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
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
import { openTurnSession, type TurnSession } from '../support/turn-allocate.js';

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

/**
 * A host "on the internet" inside the client's namespace, on `ip`: a UDP echo on 7 and a TCP server on
 * 25 that greets like an SMTP server, each printing a JSON line per datagram or connection it gets.
 */
const PUBLIC_HOST_SCRIPT = `
const dgram = require('node:dgram');
const net = require('node:net');
const ip = process.argv[1];
const udp = dgram.createSocket('udp4');
udp.on('message', (message, from) => { console.log(JSON.stringify({ udp: from.address })); udp.send(message, from.port, from.address); });
udp.bind(7, ip, () => {
  net.createServer((socket) => { console.log(JSON.stringify({ tcp: socket.remoteAddress })); socket.end('220 mail.example ESMTP\\r\\n'); })
    .listen(25, ip, () => console.log(JSON.stringify({ ready: true })));
});
`;

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
  /** The "internet" host's address (198.18.0.0/15, benchmarking: coturn's old template did not deny it), its server and what it saw. */
  const publicIp = `198.18.${(process.pid % 200) + 20}.25`;
  let publicHost: ChildProcess | undefined;
  const publicSeen: Array<{ udp?: string; tcp?: string }> = [];
  const turnSessions: TurnSession[] = [];

  beforeAll(async () => {
    ns = makeClientNamespace();
    ns.addHost(publicIp);
    publicHost = spawn('ip', ['netns', 'exec', ns.netns, process.execPath, '-e', PUBLIC_HOST_SCRIPT, publicIp], { stdio: ['ignore', 'pipe', 'pipe'] });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the public host did not start within 10 s')), 10_000);
      let pending = '';
      publicHost!.stdout!.on('data', (chunk: Buffer) => {
        pending += chunk.toString('utf8');
        for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
          const line = JSON.parse(pending.slice(0, end)) as { ready?: true; udp?: string; tcp?: string };
          pending = pending.slice(end + 1);
          if (line.ready) {
            clearTimeout(timer);
            resolve();
          } else publicSeen.push(line);
        }
      });
      publicHost!.once('exit', (code) => reject(new Error(`the public host exited (${code})`)));
    });
    await ready;
    coturn = await startCoturn({ ip: ns.hostIp, secret: SECRET, mediaIp: ns.hostIp });
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
    for (const session of turnSessions) await session.close().catch(() => {});
    if (publicHost && publicHost.exitCode === null && publicHost.signalCode === null) {
      const gone = new Promise((resolve) => publicHost!.once('exit', resolve));
      publicHost.kill('SIGKILL');
      await gone;
    }
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
  it('coturn relays to the relay’s media address only: a host on the internet is refused over UDP (403, nothing sent) and TCP (no TCP relay, no Connect)', { timeout: 60_000 }, async () => {
    // The host is there: straight from the root namespace, its echo answers and its banner arrives.
    const echo = createSocket('udp4');
    try {
      await new Promise<void>((resolve) => echo.bind(0, ns!.hostIp, resolve));
      const answered = new Promise<string>((resolve) => echo.once('message', (message) => resolve(message.toString('utf8'))));
      echo.send('direct', 7, publicIp);
      expect(await Promise.race([answered, new Promise((resolve) => setTimeout(() => resolve('no echo within 5 s'), 5000))])).toBe('direct');
    } finally {
      echo.close();
    }
    const banner = await new Promise<string>((resolve, reject) => {
      const socket = createConnection({ host: publicIp, port: 25, localAddress: ns!.hostIp });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.once('end', () => resolve(text));
      socket.once('error', reject);
    });
    expect(banner).toMatch(/^220 /);
    const seenDirectly = publicSeen.length;
    expect(seenDirectly).toBe(2);

    // Through coturn, with the credentials a client gets.
    const user = await register(t!.app);
    const [server] = (await call(t!.app, 'GET', '/ice-servers', { token: user.tokens.token })).body.data.ice_servers;
    const open = async (control: 'udp' | 'tcp') => {
      const session = await openTurnSession({ ip: coturn!.ip, port: coturn!.port, username: server!.username, password: server!.credential, control });
      turnSessions.push(session);
      return session;
    };
    const udp = await open('udp');
    expect(await udp.allocate(), coturn!.log()).toMatchObject({ ok: true });
    // The relay's media address is allowed (the calls above go there) ...
    expect(await udp.createPermission(ns!.hostIp)).toEqual({ ok: true });
    // ... any other is not: the host here, and a few others that no CreatePermission sends anything to.
    for (const peer of [publicIp, '192.0.0.9', '198.19.0.1', '203.0.113.5', '8.8.8.8', '127.0.0.1', '10.0.0.1']) {
      expect(await udp.createPermission(peer), peer).toMatchObject({ ok: false, errorCode: 403 });
    }
    for (let i = 0; i < 5; i++) udp.send(publicIp, 7, Buffer.from(`relayed ${i}`));
    const tcp = await open('tcp');
    // RFC 6062: no TCP allocation, and Connect on the UDP one is refused.
    expect(await tcp.allocate({ transport: 'tcp' })).toMatchObject({ ok: false, errorCode: 442 });
    expect(await tcp.allocate({ transport: 'udp' })).toMatchObject({ ok: true });
    expect(await tcp.connect(publicIp, 25)).toMatchObject({ ok: false, errorCode: 403 });
    // Time for anything relayed to arrive (the direct echo took milliseconds): nothing did.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(publicSeen.slice(seenDirectly)).toEqual([]);
    expect(udp.received).toEqual([]);
  });
});
