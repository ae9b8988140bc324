// Issue 27 #6: the relay client as a signaling-server author installs it. `npm pack` of
// packages/relay-client, installed from the tarball into an empty project (no registry), run with
// plain `node` as ESM and as CommonJS against a started service (a router, an event of the stream,
// a webhook delivery verified), and a consumer type-checked with target and lib ES2022.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';

const run = promisify(execFile);
const PACKAGE_DIR = path.join(ROOT, 'packages/relay-client');
const PACKAGE_NAME = '@chat-backend/relay-client';
const WEBHOOK_SECRET = 'package-test-webhook-secret-0123456789abcdef';

/** What a signaling server does with the client; `IMPORT` is replaced by the ESM or CommonJS form. */
const CONSUMER = `IMPORT
const { createServer } = NODE_HTTP;

async function main() {
  const batches = [];
  const hooks = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        batches.push(verifyWebhook(Buffer.concat(chunks), req.headers, process.env.WEBHOOK_SECRET));
        res.writeHead(204).end();
      } catch (error) {
        res.writeHead(401).end(String(error));
      }
    });
  });
  await new Promise((resolve) => hooks.listen(Number(process.env.WEBHOOK_PORT), '127.0.0.1', resolve));
  const relay = createRelayClient({ baseUrl: process.env.RELAY_URL, token: process.env.RELAY_TOKEN });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 30000);
  // From the last event before ours: the stream opens when it is first read, after the calls below.
  const { events } = await relay.info();
  const stream = relay.events({ signal: stop.signal, lastEventId: events.lastId });
  const router = await relay.createRouter({ appData: { room: 'package-test' } });
  await relay.closeRouter(router.id);
  let streamed;
  for await (const event of stream) {
    if (event.type === 'router.closed' && event.routerId === router.id) { streamed = event; break; }
  }
  while (!batches.some((b) => b.events.some((e) => e.type === 'router.closed' && e.routerId === router.id))) {
    if (stop.signal.aborted) throw new Error('no webhook delivery');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let notFound;
  try { await relay.closeRouter(router.id); } catch (error) { notFound = error instanceof RelayClientError ? error.code : String(error); }
  clearTimeout(timer);
  stop.abort();
  hooks.close();
  console.log(JSON.stringify({ created: typeof router.id, streamed: streamed && streamed.reason, webhook: 'verified', notFound }));
}
main().then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
`;

describe('the relay client package', () => {
  let project: string;
  let tarball: string;
  let server: ServerProcess | undefined;
  let webhookPort: number;

  beforeAll(async () => {
    // The service starts while the package is built and installed (the build is most of the wait).
    webhookPort = await freePort();
    const starting = startServer({ EVENTS_WEBHOOK_URL: `http://127.0.0.1:${webhookPort}/hook`, EVENTS_WEBHOOK_SECRET: WEBHOOK_SECRET }, { timeoutMs: 90_000 });
    // Stopped after the file even if the build fails first.
    void starting.then((started) => (server = started), () => {});
    // What `npm run build` runs for the package (postbuild), then `npm pack`.
    const scripts = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const [command, ...args] = scripts.postbuild!.split(' ');
    expect(command).toBe('node');
    await run(process.execPath, args, { cwd: ROOT });
    project = await mkdtemp(path.join(os.tmpdir(), 'relay-client-consumer-'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: PACKAGE_DIR });
    tarball = path.join(project, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'signaling-server', private: true, type: 'module' }));
    // Offline: the package must install from its tarball alone (no dependency to fetch).
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: project });
    server = await starting;
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  }, 60_000);

  it('holds compiled JavaScript and its declarations only, and depends on nothing', async () => {
    const manifest = JSON.parse(await readFile(path.join(project, 'node_modules', PACKAGE_NAME, 'package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    const files = await readdir(path.join(project, 'node_modules', PACKAGE_NAME, 'dist'), { recursive: true });
    expect(files.filter((f) => /\.(ts|tsx|mts|cts)$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.d.cts'))).toEqual([]);
    expect(files.sort()).toEqual(['index.cjs', 'index.d.cts', 'index.d.ts', 'index.js']);
  });

  for (const [kind, file, importLine] of [
    ['ESM', 'consumer.mjs', `import { createRelayClient, RelayClientError, verifyWebhook } from '${PACKAGE_NAME}';\nimport * as http from 'node:http';\nconst NODE_HTTP = http;`],
    ['CommonJS', 'consumer.cjs', `const { createRelayClient, RelayClientError, verifyWebhook } = require('${PACKAGE_NAME}');\nconst NODE_HTTP = require('node:http');`],
  ] as const) {
    it(`runs with plain node as ${kind}: a router, its event on the stream, a verified webhook, a typed error`, { timeout: 60_000 }, async () => {
      await writeFile(path.join(project, file), CONSUMER.replace('IMPORT', importLine));
      const { stdout } = await run(process.execPath, [file], {
        cwd: project,
        timeout: 45_000,
        env: { PATH: process.env.PATH ?? '', RELAY_URL: server!.url, RELAY_TOKEN: SERVER_TOKEN, WEBHOOK_PORT: String(webhookPort), WEBHOOK_SECRET },
      });
      expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ created: 'string', streamed: 'api', webhook: 'verified', notFound: 'NOT_FOUND' });
    });
  }

  it('declares its types in itself: no import of hono, zod or any other package, no server code', async () => {
    const dist = path.join(project, 'node_modules', PACKAGE_NAME, 'dist');
    for (const file of ['index.d.ts', 'index.d.cts']) {
      const declarations = await readFile(path.join(dist, file), 'utf8');
      expect(declarations.split('\n').filter((line) => /^\s*import\b|\bfrom\s+['"]|import\(['"]|reference (types|path)=/.test(line))).toEqual([]);
      expect(declarations).toMatch(/export declare function createRelayClient\(options: RelayClientOptions\): RelayClient;/);
      // Names of zod's and Hono's own types, which the contract-derived types were made of.
      expect(declarations).not.toMatch(/\b(Zod\w*|Hono\w*|ClientResponse|JSONValue|JSONParsed)\b/);
    }
  });

  // The consumer has only the package (and Node's types) installed: neither hono nor zod is there to
  // resolve, and skipLibCheck is off, so the package's declarations are checked in full.
  it('type-checks a consumer (ESM and CommonJS) with target and lib ES2022 in under 10 s', { timeout: 60_000 }, async () => {
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: false },
        files: ['consumer.ts', 'consumer-cjs.cts'],
      }),
    );
    await writeFile(
      path.join(project, 'consumer.ts'),
      `import { createRelayClient, RelayClientError, verifyWebhook, type RelayEvent, type RelayClient, type Transport } from '${PACKAGE_NAME}';
const relay: RelayClient = createRelayClient({ baseUrl: 'http://127.0.0.1:3000', token: 'x' });
export async function room(): Promise<string> {
  const router = await relay.createRouter({ appData: { room: 'r' } });
  const transport: Transport = await relay.createTransport({ routerId: router.id, direction: 'send' });
  const id: string = transport.id;
  // @ts-expect-error: a direction the relay does not know
  await relay.createTransport({ routerId: router.id, direction: 'sideways' });
  try { await relay.closeRouter(router.id); } catch (error) { if (error instanceof RelayClientError && error.code === 'NOT_FOUND') return id; }
  for await (const event of relay.events({ routerIds: [router.id] })) {
    if (event.type === 'router.closed') return event.reason;
  }
  return router.id;
}
export function hook(body: string, headers: Record<string, string>): RelayEvent[] {
  return verifyWebhook(body, headers, 'secret').events;
}
`,
    );
    await writeFile(
      path.join(project, 'consumer-cjs.cts'),
      `import { createRelayClient, RelayClientError, type Consumer } from '${PACKAGE_NAME}';
export async function consume(transportId: string, producerId: string): Promise<Consumer | undefined> {
  const relay = createRelayClient({ baseUrl: 'http://127.0.0.1:3000', token: 'x' });
  try {
    return await relay.createConsumer({ transportId, producerId, rtpCapabilities: { codecs: [{ mimeType: 'audio/opus', clockRate: 48000, preferredPayloadType: 100 }] } });
  } catch (error) {
    if (error instanceof RelayClientError && error.code === 'CAN_NOT_CONSUME') return undefined;
    throw error;
  }
}
`,
    );
    // The consumer's Node types: what a signaling server has installed anyway.
    await symlink(path.join(ROOT, 'node_modules/@types'), path.join(project, 'node_modules/@types'));
    // tsc's own time (user + system CPU, taken in its process at exit): the machine running the suite
    // may be loaded several times over, which stretches the wall clock, not the work.
    const cpuAtExit = 'data:text/javascript,process.on("exit",()=>process.stderr.write("\\ntsc-cpu-us "+JSON.stringify(process.cpuUsage())+"\\n"))';
    const started = performance.now();
    const checked = await run(process.execPath, ['--import', cpuAtExit, path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: project }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    const wallMs = performance.now() - started;
    expect(checked.stdout).toBe('');
    const usage = /tsc-cpu-us (\{.*\})/.exec(checked.stderr)?.[1];
    expect(usage, checked.stderr).toBeDefined();
    const { user, system } = JSON.parse(usage!) as { user: number; system: number };
    const cpuMs = (user + system) / 1000;
    console.log(`consumer type-check: ${Math.round(cpuMs)} ms of CPU, ${Math.round(wallMs)} ms wall (load average ${os.loadavg()[0]!.toFixed(1)})`);
    expect(cpuMs).toBeLessThan(10_000);
  });
});
