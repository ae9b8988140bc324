// The Chromium tab of test/browser/calls-page.ts, opened for a test that plays its signaling server
// with the typed relay client: mediasoup-client sends the fake camera at 1280x720 in three simulcast
// encodings and receives it back in the same tab. Used by test/e2e/browser-calls.test.ts and
// test/e2e/browser-recording.test.ts; its signaling (relaySignal) by test/e2e/turn-relay.test.ts too.
import type { Page } from 'playwright-core';
import { bundleForBrowser } from '../../examples/browser-demo/start.js';
import type { RelayClient } from '../../src/client/relay-client.js';
import { launchChromium, type LaunchedChromium } from './browser.js';

const PAGE_ORIGIN = 'http://127.0.0.1:9';
const PAGE_SCRIPT = new URL('../browser/calls-page.ts', import.meta.url).pathname;

export type Opened = { producerId: string; consumerId: string; sendTransportId: string; recvTransportId: string; encodings: number };
export type Inbound = { packetsReceived: number; bytesReceived: number; framesDecoded: number; frameWidth: number; frameHeight: number };
export type Pair = { iceState: string; pairState: string; remoteUsernameFragment: string | null; requestsSent: number; responsesReceived: number; bytesReceived: number };
/** What the page exposes (test/browser/calls-page.ts), as seen from page.evaluate(). */
export type PageWindow = {
  calls: {
    open(): Promise<Opened>;
    inbound(): Promise<Inbound>;
    restartIce(which: 'send' | 'recv', iceParameters: unknown): Promise<void>;
    selectedPair(which: 'send' | 'recv'): Promise<Pair>;
    closeTransport(which: 'send' | 'recv'): void;
  };
};

type CreatedTransport = Awaited<ReturnType<RelayClient['createTransport']>>;
type CreatedConsumer = Awaited<ReturnType<RelayClient['createConsumer']>>;

export interface CallsPage {
  browser: LaunchedChromium;
  page: Page;
  /** The browser's console and page errors, for a failure's message. */
  consoleLines: string[];
  /** The router the tab asked for, once it has. */
  routerId(): string | undefined;
  /** Closes the browser, then the tab's router. */
  close(): Promise<void>;
}

/**
 * Chromium with the page loaded and window.signal wired to the relay: one router for the tab; `hooks`
 * see each transport and consumer the relay made for it (a test's own checks).
 */
export async function openCallsPage(relay: RelayClient, hooks: SignalHooks = {}): Promise<CallsPage> {
  const script = await bundleForBrowser(PAGE_SCRIPT);
  const browser = await launchChromium({ viewport: { width: 800, height: 600 } });
  const consoleLines: string[] = [];
  const signal = relaySignal(relay, hooks);
  const close = async () => {
    await browser.close();
    const routerId = signal.routerId();
    if (routerId) await relay.closeRouter(routerId).catch(() => {});
  };
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    // Served from memory on a loopback origin (a secure context, as getUserMedia needs).
    await page.route(`${PAGE_ORIGIN}/**`, (route) => {
      const isScript = route.request().url().endsWith('/calls.js');
      return route.fulfill(
        isScript
          ? { contentType: 'text/javascript', body: script }
          : { contentType: 'text/html', body: '<!doctype html><meta charset="utf-8"><body><script type="module" src="/calls.js"></script></body>' },
      );
    });
    await page.exposeFunction('signal', signal.handle);
    await page.goto(`${PAGE_ORIGIN}/`);
    await page.waitForFunction(() => 'calls' in globalThis, null, { timeout: 10_000 });
    return { browser, page, consoleLines, routerId: signal.routerId, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface SignalHooks {
  /** The router's appData. */
  appData?: Record<string, unknown>;
  router?(id: string): void;
  transport?(created: CreatedTransport): void;
  consumer?(created: CreatedConsumer): void;
}

/**
 * The pages' window.signal(op, body) played by a test as a signaling server would (one router per tab,
 * then transports, produce, consume, resume), calling the relay with the typed client.
 */
export function relaySignal(relay: RelayClient, hooks: SignalHooks = {}): { handle: (op: string, body: any) => Promise<unknown>; routerId: () => string | undefined } {
  let routerId: string | undefined;
  return {
    routerId: () => routerId,
    handle: async (op, body) => {
      switch (op) {
        case 'router': {
          const router = await relay.createRouter({ appData: hooks.appData ?? {} });
          routerId = router.id;
          hooks.router?.(router.id);
          return router.rtpCapabilities;
        }
        case 'transport': {
          const tr = await relay.createTransport({ routerId: routerId!, direction: body.direction });
          hooks.transport?.(tr);
          return { id: tr.id, iceParameters: tr.iceParameters, iceCandidates: tr.iceCandidates, dtlsParameters: tr.dtlsParameters };
        }
        case 'connect':
          return relay.connectTransport(body.transportId, body.dtlsParameters);
        case 'produce':
          return { id: (await relay.createProducer({ transportId: body.transportId, kind: body.kind, rtpParameters: body.rtpParameters })).id };
        case 'consume': {
          const c = await relay.createConsumer({ transportId: body.transportId, producerId: body.producerId, rtpCapabilities: body.rtpCapabilities });
          hooks.consumer?.(c);
          return { id: c.id, producerId: c.producerId, kind: c.kind, rtpParameters: c.rtpParameters };
        }
        case 'resume':
          return relay.resumeConsumer(body.consumerId);
      }
      throw new Error(`unknown signal ${op}`);
    },
  };
}

/** Polls `read` until `done` holds, at most `timeoutMs`; returns the last value read. */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
