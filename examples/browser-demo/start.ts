// Starts the whole demo: the chat-backend service as a child process (`node --import tsx
// src/server.ts`), the page bundled with esbuild, and the signaling server in this process.
// Used by `npm run demo` (main.ts) and by the real-browser test.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { build } from 'esbuild';
import { createSignalingApp } from './server.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const LOG_TAIL_CHARS = 16_000;

export interface DemoOptions {
  /** Port of the signaling server and page; 0 picks a free one. */
  demoPort: number;
  /** Port of the chat-backend service; 0 picks a free one. */
  servicePort: number;
  /** The one UDP/TCP port of the service's single mediasoup worker. */
  rtcPort: number;
  /**
   * Ports of the RTC range from `rtcPort` on (default 1: the worker's port only). A WHEP player needs
   * more: its session's router reaches the room through pipe transports, two ports each (`npm run demo`
   * gives 9).
   */
  rtcPortCount?: number;
  /** `memory://` (default) keeps the accounts in memory for this run only. */
  databaseUrl?: string;
  /** The service's LOG_LEVEL (default `warn`). */
  serviceLogLevel?: string;
  /** `inherit` writes the service's output to this terminal; `capture` keeps its tail for `serviceLog()`. */
  serviceOutput?: 'inherit' | 'capture';
  /** More of the service's environment (the relayed-call test gives TURN_URLS and TURN_SECRET this way; npm run demo inherits its own). */
  serviceEnv?: Record<string, string>;
  /** How long to wait for the service's /readyz (default 30 s; a test on a loaded machine waits longer). */
  readyTimeoutMs?: number;
}

export interface RunningDemo {
  /** The page, e.g. `http://127.0.0.1:8080/`. */
  url: string;
  /** The same page on `localhost` (`http://localhost:8080/`), where its passkey buttons work. */
  passkeyUrl: string;
  serviceUrl: string;
  /** The service's INTERNAL_TOKEN (generated per run), for tests that act on the relay behind the demo's back. */
  internalToken: string;
  /** The tail of the service's output (with `serviceOutput: 'capture'`). */
  serviceLog(): string;
  /** Stops the signaling server and the service; resolves once the service has exited. */
  close(): Promise<void>;
}

/** A port of the demo that is taken (or refused) on 127.0.0.1: which option, so the caller can name its setting. */
export class DemoPortError extends Error {
  constructor(
    readonly option: 'demoPort' | 'servicePort' | 'rtcPort',
    readonly port: number,
    readonly protocol: 'tcp' | 'udp',
    readonly code: string,
  ) {
    super(`${HOST}:${port} (${protocol.toUpperCase()}) cannot be used: ${code === 'EADDRINUSE' ? 'already in use' : code}`);
    this.name = 'DemoPortError';
  }
}

/** The error code of binding `port` on 127.0.0.1 right now, or undefined when it is free. */
async function bindError(port: number, protocol: 'tcp' | 'udp'): Promise<string | undefined> {
  const code = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error);
  if (protocol === 'udp') {
    const socket = createSocket('udp4');
    return new Promise((resolve) => {
      socket.once('error', (error) => {
        socket.close();
        resolve(code(error));
      });
      socket.bind(port, HOST, () => socket.close(() => resolve(undefined)));
    });
  }
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', (error) => resolve(code(error)));
    server.listen(port, HOST, () => server.close(() => resolve(undefined)));
  });
}

/**
 * Checks the ports asked for before anything starts, so that a taken one is named by its option
 * rather than found by the service (whose message would name its own PORT) or after the service is
 * up. A port taken between this check and its use still fails, with the service's message.
 */
async function checkPorts(options: DemoOptions): Promise<void> {
  const wanted: [DemoPortError['option'], number, 'tcp' | 'udp'][] = [
    ['demoPort', options.demoPort, 'tcp'],
    ['servicePort', options.servicePort, 'tcp'],
    ['rtcPort', options.rtcPort, 'udp'],
    ['rtcPort', options.rtcPort, 'tcp'],
  ];
  for (const [option, port, protocol] of wanted) {
    if (port === 0) continue;
    const code = await bindError(port, protocol);
    if (code !== undefined) throw new DemoPortError(option, port, protocol, code);
  }
}

/** A port that was free a moment ago on 127.0.0.1 (the service needs a number before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Bundles a browser entry point (and what it imports, e.g. mediasoup-client) in memory: nothing is written to the tree. */
export async function bundleForBrowser(entryPoint: string): Promise<string> {
  const bundle = await build({
    entryPoints: [entryPoint],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    sourcemap: 'inline',
    write: false,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]?.text;
  if (!script) throw new Error(`esbuild produced no bundle for ${entryPoint}`);
  return script;
}

/** Bundles page.ts for the browser, in memory: the bundle is never written to the tree. */
export async function buildPage(): Promise<{ html: string; script: string; whip: string; whep: string }> {
  const [html, script, whip, whep] = await Promise.all([readFile(`${HERE}index.html`, 'utf8'), bundleForBrowser(`${HERE}page.ts`), readFile(`${HERE}whip.html`, 'utf8'), readFile(`${HERE}whep.html`, 'utf8')]);
  return { html, script, whip, whep };
}

function startService(options: DemoOptions & { servicePort: number; demoPort: number; internalToken: string }) {
  const child = spawn(
    process.execPath,
    // exit-with-parent.ts: the service stops when this process dies without cleaning up.
    ['--import', 'tsx', '--import', `${HERE}exit-with-parent.ts`, 'src/server.ts'],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        HOST,
        PORT: String(options.servicePort),
        DATABASE_URL: options.databaseUrl ?? 'memory://',
        INTERNAL_TOKEN: options.internalToken,
        MEDIASOUP_WORKERS: '1',
        MEDIASOUP_LISTEN_IP: HOST,
        RTC_MIN_PORT: String(options.rtcPort),
        RTC_MAX_PORT: String(options.rtcPort + (options.rtcPortCount ?? 1) - 1),
        // The signaling server proxies the account API and appends the browser's address.
        TRUST_PROXY: 'xff',
        LOG_LEVEL: options.serviceLogLevel ?? 'warn',
        // Passkeys: WebAuthn takes a domain name, not 127.0.0.1, as the RP ID; the page's passkey
        // buttons work at http://localhost:<demo port>/, whose ceremonies the service accepts.
        WEBAUTHN_RP_ID: 'localhost',
        WEBAUTHN_ORIGINS: `http://localhost:${options.demoPort}`,
        // Sign in with a provider (OIDC_PROVIDERS and its variables, inherited): the page's origin is the
        // account API's public one, so the provider returns to <this origin>/api/v1/auth/oidc/<name>/callback
        // (register that there) and the web flow ends back on the page.
        AUTH_ISSUER: process.env.AUTH_ISSUER ?? `http://${HOST}:${options.demoPort}`,
        OIDC_REDIRECT_URIS: process.env.OIDC_REDIRECT_URIS ?? `http://${HOST}:${options.demoPort}/`,
        ...options.serviceEnv,
      },
      stdio: ['pipe', options.serviceOutput === 'capture' ? 'pipe' : 'inherit', options.serviceOutput === 'capture' ? 'pipe' : 'inherit'],
    },
  );
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code ?? 0)));
  return { child, exited, log: () => log };
}

async function waitReady(serviceUrl: string, exited: Promise<number | string>, log: () => string, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  let exit: number | string | undefined;
  void exited.then((e) => (exit = e));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`the service exited (${exit}) before it was ready\n${log()}`);
    const ready = await fetch(`${serviceUrl}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the service was not ready within ${timeoutMs} ms\n${log()}`);
}

async function stopService(child: ChildProcess, exited: Promise<number | string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * @example
 * const demo = await startDemo({ demoPort: 0, servicePort: 0, rtcPort: 40100 })
 * console.log(demo.url); await demo.close()
 * @throws DemoPortError when a port asked for is taken, before anything starts
 */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  await checkPorts(options);
  const internalToken = randomBytes(32).toString('base64url');
  const servicePort = options.servicePort || (await freePort());
  // Known before the service starts: it is the origin of the page's passkey ceremonies.
  const demoPort = options.demoPort || (await freePort());
  const serviceUrl = `http://${HOST}:${servicePort}`;
  const service = startService({ ...options, servicePort, demoPort, internalToken });

  let server: ServerType | undefined;
  let signaling: ReturnType<typeof createSignalingApp> | undefined;
  const close = async () => {
    if (server) {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      if ('closeAllConnections' in server) server.closeAllConnections();
      await closed;
    }
    await signaling?.closeAll();
    await stopService(service.child, service.exited);
  };

  try {
    const [assets] = await Promise.all([buildPage(), waitReady(serviceUrl, service.exited, service.log, options.readyTimeoutMs)]);
    signaling = createSignalingApp({ serviceUrl, internalToken, assets });
    const port = await new Promise<number>((resolve, reject) => {
      server = serve({ fetch: signaling!.app.fetch, port: demoPort, hostname: HOST }, (info) => resolve(info.port));
      server.once('error', reject);
    });
    return { url: `http://${HOST}:${port}/`, passkeyUrl: `http://localhost:${port}/`, serviceUrl, internalToken, serviceLog: service.log, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
