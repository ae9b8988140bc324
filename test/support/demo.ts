// The browser demo (examples/browser-demo, started as `npm run demo` starts it) and a Chromium for one
// describe block of the end-to-end tests: each started when a test asks for it, both closed after the
// block (the browser first).
import { afterAll } from 'vitest';
import { startDemo, type DemoOptions, type RunningDemo } from '../../examples/browser-demo/start.js';
import { allocateRtcPorts } from './app.js';
import { launchChromium, type LaunchedChromium } from './browser.js';

export interface DemoInChromium {
  /** What start() and launch() made, for a later test of the block (unset if they did not run). */
  demo?: RunningDemo;
  browser?: LaunchedChromium;
  /** The demo on free ports, its service's log captured, one RTC port of this worker's. */
  start(options?: Partial<DemoOptions>): Promise<RunningDemo>;
  /** A headless Chromium with a fresh profile. */
  launch(): Promise<LaunchedChromium>;
}

/** @example const session = useDemoInChromium(); it('…', async () => { const demo = await session.start(); const browser = await session.launch(); … }) */
export function useDemoInChromium(closeTimeoutMs = 20_000): DemoInChromium {
  const session: DemoInChromium = {
    async start(options = {}) {
      return (session.demo = await startDemo({ demoPort: 0, servicePort: 0, rtcPort: allocateRtcPorts(1).min, serviceOutput: 'capture', ...options }));
    },
    async launch() {
      return (session.browser = await launchChromium());
    },
  };
  afterAll(async () => {
    await session.browser?.close();
    await session.demo?.close();
  }, closeTimeoutMs);
  return session;
}
