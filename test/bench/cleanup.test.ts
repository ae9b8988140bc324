// The benchmarks end what they start, also when they fail or are stopped: each runs here as
// `npm run bench` runs it (node --import tsx bench/<name>.ts), in a process group of its own, and
// after it has ended no process of that group (its servers, their mediasoup workers) may remain.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/server-process.js';

/** What /proc shows of the processes of group `pgid`: pid and command line. */
function groupMembers(pgid: number): { pid: number; cmd: string }[] {
  const members: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name's closing parenthesis: state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp !== pgid) continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      // A zombie waiting for its parent is gone already.
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      members.push({ pid: Number(entry), cmd });
    } catch {
      // ended while read
    }
  }
  return members;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const groups: number[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  // Whatever a failed assertion left: the test's own cleanup, not the benchmark's.
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const socket of sockets.splice(0)) socket.close();
});

function runBenchmark(name: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], {
    cwd: ROOT,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.push(child.pid!);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { pid: child.pid!, exited, output: () => output };
}

/** Holds UDP `port` on 127.0.0.1 so that a WebRtcServer asked for it cannot start. */
async function holdUdpPort(port: number): Promise<void> {
  const socket = createSocket('udp4');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve());
  });
}

describe('a benchmark ends what it started', () => {
  it('relay-control whose own server cannot start: the baseline server it started first is gone too', { timeout: 120_000 }, async () => {
    // Every RTC port of the benchmarks' servers (test/support/ports.ts: 22000-22179, shifted) is
    // held, so the real server fails at start; the bare baseline (22199) starts before it.
    const shift = Number(process.env.TEST_RTC_PORT_SHIFT ?? 0);
    for (let port = 22_000 + shift; port <= 22_179 + shift; port++) await holdUdpPort(port);
    const bench = runBenchmark('relay-control');
    const exit = await bench.exited;
    expect(exit.code, bench.output()).not.toBe(0);
    expect(bench.output()).toContain('server did not become ready');
    // A server's mediasoup worker ends once its parent has (its channel closes): a moment's grace.
    const left = await until('the group to empty', () => (groupMembers(bench.pid).length === 0 ? [] : undefined), 5000).catch(() => groupMembers(bench.pid));
    expect(left, bench.output()).toEqual([]);
  });

  it('media-fanout stopped by SIGTERM (run.ts at its time limit) while its server runs: the server is gone too', { timeout: 120_000 }, async () => {
    const bench = runBenchmark('media-fanout');
    await until('the server of the benchmark', () => (groupMembers(bench.pid).some((p) => p.cmd.includes('src/server.ts')) ? true : undefined), 60_000);
    process.kill(bench.pid, 'SIGTERM');
    const exit = await bench.exited;
    expect(exit, bench.output()).not.toEqual({ code: 0, signal: null });
    const left = await until('the group to empty', () => (groupMembers(bench.pid).length === 0 ? [] : undefined), 5000).catch(() => groupMembers(bench.pid));
    expect(left, bench.output()).toEqual([]);
  });
});
