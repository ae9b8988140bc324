// The real server (src/server.ts, compiled as the image compiles it) as a child process on 127.0.0.1,
// for the tests that need a real process: signals, sockets, an outage of its database. Always stopped,
// even on failure.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';
import { migratedDataDir } from './pglite-snapshot.js';
import { childServerRtcPorts } from './ports.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SERVER_TOKEN = 'reliability-internal-token-0123456789abcdef';
export const SERVER_AUTH_KEY_SECRET = 'reliability-auth-key-secret-0123456789abcdef';

const COMPILED_PREFIX = '.test-server-';
/**
 * Loaded first in every child server (`--import`): the server kills itself once the test process that
 * started it is gone (its parent changed), also when that process was killed and no exit handler ran
 * (a vitest fork ended at a timeout): such a server would hold its ports for the rest of the run.
 */
const EXIT_WITH_PARENT = `const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL'); }, 1000).unref();
`;
let compiled: Promise<string> | undefined;

/**
 * src/ compiled to JavaScript once per version of its files (esbuild, file by file, as tsx does it on
 * the fly), for `node <folder>/server.js`; returns that file. Under `--import tsx` a start spent about
 * 1.7 s of CPU importing the modules, most of it in the loader (each module resolved and loaded
 * through tsx's hooks, even with its transform cache), against 0.7 s compiled, at every start. The
 * folder sits where the image's dist/ sits, at the checkout's top (what src/ finds from its own
 * location, node_modules, drizzle/ and package.json, is the same), git-ignored as `.test-server-*`;
 * its name is a digest of every source file, so an edit makes a new one and removes the old ones.
 */
export function compiledServer(): Promise<string> {
  compiled ??= compile();
  return compiled;
}

async function compile(): Promise<string> {
  const src = path.join(ROOT, 'src');
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((name) => name.endsWith('.ts')).sort();
  const hash = createHash('sha256').update(esbuildVersion).update(EXIT_WITH_PARENT).update(readFileSync(path.join(ROOT, 'tsconfig.json')));
  for (const name of files) hash.update(name).update(readFileSync(path.join(src, name)));
  const name = `${COMPILED_PREFIX}${hash.digest('hex').slice(0, 16)}`;
  const dir = path.join(ROOT, name);
  const server = path.join(dir, 'server.js');
  if (existsSync(server)) return server;
  const partial = `${dir}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await build({
    entryPoints: files.map((file) => path.join(src, file)),
    outdir: partial,
    outbase: src,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    logLevel: 'error',
  });
  writeFileSync(path.join(partial, 'exit-with-parent.mjs'), EXIT_WITH_PARENT);
  try {
    await rename(partial, dir);
  } catch (error) {
    // Another fork renamed its copy first (a non-empty folder is not replaced): that one serves.
    await rm(partial, { recursive: true, force: true });
    if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Builds of earlier sources, once an hour old (a run of the suite that may still start one is over by then).
  for (const other of readdirSync(ROOT)) {
    if (!other.startsWith(COMPILED_PREFIX) || other === name) continue;
    const modified = statSync(path.join(ROOT, other), { throwIfNoEntry: false })?.mtimeMs;
    if (modified !== undefined && Date.now() - modified > 3_600_000) await rm(path.join(ROOT, other), { recursive: true, force: true });
  }
  return server;
}

/**
 * A server whose own env names its port (a cluster node's CLUSTER_NODE_URL): on a port from freePort(),
 * taken again (3 tries) when another process bound it between (an outgoing connection's ephemeral port:
 * EADDRINUSE).
 * @example const node = await startServerAt((port) => ({ CLUSTER_NODE_URL: `http://127.0.0.1:${port}` }), { rtcPorts: 3 })
 */
export async function startServerAt(envFor: (port: number) => Record<string, string>, options: Omit<NonNullable<Parameters<typeof startServer>[1]>, 'port'> = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startServer(envFor(port), { ...options, port });
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
    }
  }
}

/** A TCP port free on 127.0.0.1 right now (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface ServerProcess {
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** Everything the process printed, most recent 64 KiB. */
  output(): string;
  /** Its pino JSON lines parsed (other lines skipped). */
  logLines(): LogLine[];
  /** Resolves with the exit code and signal (and its time, `at`) once the process and its database folder are gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
const dataDirs = new Set<string>();
// A vitest worker that dies mid-test must not leave servers (or their database folders) behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Starts the server and waits for `readyPath` (default /readyz) to answer 200.
 *
 * Its database, unless `env` names a DATABASE_URL or a DATA_DIR: embedded PGlite in a new folder
 * holding a copy of the suite's migrated cluster (test/support/pglite-snapshot.ts), given as
 * DATA_DIR, as a development start uses it; the folder goes when the process has exited. A new
 * cluster (`DATABASE_URL: 'memory://'`, still available) costs several seconds of initdb per start.
 * @example const server = await startServer({ EVENTS_HEARTBEAT_S: '1' }); try { … } finally { await server.stop() }
 */
export async function startServer(
  env: Record<string, string> = {},
  options: {
    readyPath?: string;
    timeoutMs?: number;
    workers?: number;
    /** RTC ports (RTC_MIN_PORT-RTC_MAX_PORT): one per worker unless more are asked for (plain transports take the others), at most 10. */
    rtcPorts?: number;
    /** Run it inside this network namespace (`ip netns exec`), listening on `host` (default 127.0.0.1). */
    netns?: string;
    host?: string;
    /** The port to listen on (one the caller took from freePort(), e.g. to name it in the server's own env); default a free one. */
    port?: number;
  } = {},
): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const workers = options.workers ?? Number(env.MEDIASOUP_WORKERS ?? 1);
  const rtc = childServerRtcPorts(options.rtcPorts ?? workers);
  const host = options.host ?? '127.0.0.1';
  const server = await compiledServer();
  const nodeArgs = ['--import', pathToFileURL(path.join(path.dirname(server), 'exit-with-parent.mjs')).href, server];
  // `ip netns exec` execs node in place: the child's pid is the server's, so stop() signals it.
  const [command, args] = options.netns ? ['ip', ['netns', 'exec', options.netns, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const dataDir = 'DATABASE_URL' in env || 'DATA_DIR' in env ? undefined : await migratedDataDir();
  if (dataDir) dataDirs.add(dataDir);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: host,
      ...(dataDir ? { DATABASE_URL: '', DATA_DIR: dataDir } : { DATABASE_URL: 'memory://' }),
      INTERNAL_TOKEN: SERVER_TOKEN,
      AUTH_KEY_SECRET: SERVER_AUTH_KEY_SECRET,
      MEDIASOUP_WORKERS: String(workers),
      RTC_MIN_PORT: String(rtc.min),
      RTC_MAX_PORT: String(rtc.max),
      MEDIASOUP_LISTEN_IP: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_AUTH_PER_MIN: '0',
      RATE_LIMIT_REFRESH_PER_MIN: '0',
      RATE_LIMIT_API_PER_MIN: '0',
      LOGIN_FAILURES_PER_ACCOUNT: '0',
      // Many tests race dozens of logins on purpose; the tests of the bound set their own.
      PASSWORD_HASH_MAX_WAIT_MS: '60000',
      // SIGTERM shuts down at once (the drain tests set their own).
      DRAIN_TIMEOUT_S: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-65536);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      const exit = { code, signal, at: performance.now() };
      if (!dataDir) return resolve(exit);
      // Its database folder goes before anyone hears of the exit (`at` is the exit's own time).
      void rm(dataDir, { recursive: true, force: true }).finally(() => {
        dataDirs.delete(dataDir);
        resolve(exit);
      });
    });
  });

  const url = `http://${host}:${port}`;
  const stop = async (graceMs = 6000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let ready = false;
  while (!ready && Date.now() < deadline && child.exitCode === null) {
    try {
      const res = await fetch(`${url}${options.readyPath ?? '/readyz'}`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      ready = res.status === 200;
    } catch {
      // not listening yet
    }
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!ready) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`server did not become ready:\n${output}`);
  }

  return {
    url,
    port,
    pid: child.pid!,
    child,
    output: () => output,
    logLines: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as LogLine];
          } catch {
            return [];
          }
        }),
    exited,
    stop,
  };
}
