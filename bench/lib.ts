// Shared pieces of the benchmarks: the real server as a child process, a keep-alive HTTP client,
// process RSS and CPU from /proc, percentiles, bounded loops, scratch PostgreSQL databases.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { benchRtcPorts } from '../test/support/ports.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_TOKEN = 'bench-internal-token-0123456789abcdefghij';
export const POSTGRES_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The RTC ports of the baselines (bare server, in-process worker); the whole plan is in test/support/ports.ts. */
export { BASELINE_RTC_PORTS } from '../test/support/ports.js';

export function bench(name: string, value: number, unit: string): void {
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 3);
  console.log(`BENCH ${name} ${shown} ${unit}`);
}

export function info(message: string): void {
  console.log(`  ${message}`);
}

export async function freePort(): Promise<number> {
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

/**
 * The servers started here and not yet gone. They end with this process however it ends (a failed
 * benchmark, an uncaught error, run.ts's SIGTERM at its time limit, Ctrl-C): a server's mediasoup
 * workers end with it (their channel to it closes).
 */
const running = new Set<ChildProcess>();

function killRunning(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

let cleanupInstalled = false;
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  // 'exit' also comes after an uncaught error or a rejected top-level await ends the benchmark.
  process.once('exit', killRunning);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killRunning();
      process.exit(128 + os.constants.signals[signal]);
    });
  }
}

/** For a start that fails after others succeeded: stops those, then rethrows. */
export function stopThenRethrow(...servers: (ServerProcess | undefined)[]): (error: unknown) => Promise<never> {
  return async (error) => {
    await Promise.all(servers.map((server) => server?.stop() ?? Promise.resolve()));
    throw error;
  };
}

export interface ServerProcess {
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readyMs: number;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <script>` (the real server unless told otherwise) on 127.0.0.1 and waits
 * for /readyz (or `readyPath`) to answer 200.
 */
export async function startServer(
  env: Record<string, string> = {},
  options: {
    script?: string;
    readyPath?: string;
    timeoutMs?: number;
    nodeArgs?: string[];
    /** Another checkout to run (bench/ab-relay.ts); default this one. */
    cwd?: string;
    /** A port taken from freePort() (e.g. named in the server's own CLUSTER_NODE_URL); default a free one. */
    port?: number;
  } = {},
): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const rtc = benchRtcPorts();
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', options.script ?? 'src/server.ts'], {
    cwd: options.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: 'memory://',
      INTERNAL_TOKEN: BENCH_TOKEN,
      RTC_MIN_PORT: String(rtc.min),
      RTC_MAX_PORT: String(rtc.max),
      MEDIASOUP_LISTEN_IP: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // A benchmark server stops at once on SIGTERM, rooms open or not (no drain).
      DRAIN_TIMEOUT_S: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  installCleanup();
  running.add(child);
  let output = '';
  child.stdout?.on('data', (d) => (output = (output + String(d)).slice(-4000)));
  child.stderr?.on('data', (d) => (output = (output + String(d)).slice(-4000)));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let readyMs = -1;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(`${url}${options.readyPath ?? '/readyz'}`);
      await res.arrayBuffer();
      if (res.status === 200) {
        readyMs = performance.now() - started;
        break;
      }
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  if (readyMs < 0) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`server did not become ready:\n${output}`);
  }
  return {
    url,
    port,
    pid: child.pid!,
    child,
    readyMs,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A keep-alive JSON client over node:http: the cheapest client, so the server's cost dominates. */
export function httpClient(baseUrl: string, headers: Record<string, string> = {}, maxSockets = 16) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const base = new URL(baseUrl);
  function request<T = any>(method: string, pathname: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: pathname,
          headers: {
            ...headers,
            ...extraHeaders,
            ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = undefined;
            if (text) {
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = text;
              }
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }
  return { request, close: () => agent.destroy() };
}
export type HttpClient = ReturnType<typeof httpClient>;

/** Resident set size of a process in MB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux
/** User + system CPU time of a process in milliseconds, from /proc/<pid>/stat (fields 14 and 15). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/**
 * Runs `task` in `concurrency` loops until `maxCount` tasks have completed or `maxMs` has passed,
 * whichever comes first. Returns completed count, elapsed ms and per-task latencies.
 */
export async function runLoops(
  task: () => Promise<void>,
  { concurrency, maxCount, maxMs }: { concurrency: number; maxCount: number; maxMs: number },
): Promise<{ count: number; elapsedMs: number; perSecond: number; latencies: number[] }> {
  let started = 0;
  let count = 0;
  const latencies: number[] = [];
  const t0 = performance.now();
  const deadline = t0 + maxMs;
  async function loop() {
    while (started < maxCount && performance.now() < deadline) {
      started += 1;
      const s = performance.now();
      await task();
      latencies.push(performance.now() - s);
      count += 1;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsedMs = performance.now() - t0;
  return { count, elapsedMs, perSecond: (count * 1000) / elapsedMs, latencies };
}

/** Creates a scratch database on the benchmark PostgreSQL server; drop() removes it. */
export async function scratchPostgresDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = postgres(POSTGRES_ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(POSTGRES_ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

export async function postgresReachable(): Promise<boolean> {
  const admin = postgres(POSTGRES_ADMIN_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await admin`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await admin.end({ timeout: 1 }).catch(() => {});
  }
}

/** Relay request bodies shared by the relay benchmarks: a fake but well-formed client. */
export const fakeDtlsParameters = {
  role: 'client' as const,
  fingerprints: [{ algorithm: 'sha-256' as const, value: Array.from({ length: 32 }, (_, i) => (i * 7 + 11).toString(16).padStart(2, '0').toUpperCase()).join(':') }],
};

export function opusProducerRtpParameters(ssrc: number) {
  return {
    mid: '0',
    codecs: [{ mimeType: 'audio/opus', payloadType: 111, clockRate: 48000, channels: 2, parameters: { useinbandfec: 1 }, rtcpFeedback: [] }],
    headerExtensions: [{ uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 1 }],
    encodings: [{ ssrc }],
    rtcp: { cname: `bench-${ssrc}`, reducedSize: true },
  };
}
