// Issue 27 #5: what a newcomer's mistakes look like at start-up. A DATABASE_URL that is not a
// PostgreSQL URL is refused by the configuration; a database that is down is retried for
// DATABASE_CONNECT_TIMEOUT_S with one line per attempt naming its host and port (never the
// password), then one fatal line; a port already in use is named by its variable.
import { createSocket } from 'node:dgram';
import { createServer, connect } from 'node:net';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { copyMigratedCluster } from '../support/pglite-snapshot.js';
import { childServerRtcPorts } from '../support/ports.js';
import { freePort, SERVER_AUTH_KEY_SECRET, SERVER_TOKEN } from '../support/server-process.js';
import { runScript, scriptFolder } from './support.js';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

interface Line {
  level: number;
  msg: string;
  [key: string]: unknown;
}

async function run(env: Record<string, string>, port?: number) {
  const cwd = await scriptFolder('start-failure-');
  dirs.push(cwd);
  // Without a DATABASE_URL of the test's, the embedded database of ./.data (the default DATA_DIR),
  // holding a copy of the migrated cluster: a new one would cost seconds of initdb.
  if (!('DATABASE_URL' in env)) await copyMigratedCluster(path.join(cwd, '.data'));
  const rtc = childServerRtcPorts(1);
  return runScript('start', {
    cwd,
    port,
    timeoutMs: 90_000,
    env: {
      HOST: '127.0.0.1',
      PORT: String(port ?? (await freePort())),
      INTERNAL_TOKEN: SERVER_TOKEN,
      AUTH_KEY_SECRET: SERVER_AUTH_KEY_SECRET,
      MEDIASOUP_WORKERS: '1',
      RTC_MIN_PORT: String(rtc.min),
      RTC_MAX_PORT: String(rtc.max),
      MEDIASOUP_LISTEN_IP: '127.0.0.1',
      ...env,
    },
  });
}

function lines(output: string): Line[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

// Each case starts a service of its own (its own folder, port and RTC ports): the cases of a group run at the same time.
describe('DATABASE_URL', () => {
  it.concurrent('refuses host:port without a scheme, naming the variable', { timeout: 60_000 }, async () => {
    const server = await run({ DATABASE_URL: 'localhost:5432' });
    const exit = await server.exited;
    expect(exit.code).toBe(1);
    expect(server.output()).toMatch(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });

  it.concurrent('a database that stays down: one line per attempt naming host and port, then one fatal line and exit 1', { timeout: 90_000 }, async () => {
    // A port nothing listens on: connections are refused.
    const closed = { port: await freePort() };
    const startedAt = performance.now();
    const server = await run({ DATABASE_URL: `postgres://chat:very-secret-pw@127.0.0.1:${closed.port}/chat`, DATABASE_CONNECT_TIMEOUT_S: '3', LOG_LEVEL: 'info' });
    const exit = await server.exited;
    const output = server.output();
    expect(exit.code, output).toBe(1);
    expect(output).not.toContain('very-secret-pw');
    expect(output).not.toMatch(/^\s+at /m);
    const all = lines(output);
    const attempts = all.filter((l) => l.level === 40 && /database not reachable/.test(l.msg));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const line of attempts) {
      expect(line.msg).toContain(`127.0.0.1:${closed.port}`);
      expect(line.msg).toContain('DATABASE_URL');
      expect(line.cause).toBe(`ECONNREFUSED 127.0.0.1:${closed.port}`);
    }
    const fatal = all.filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toMatch(new RegExp(`^DATABASE_URL: no database reachable at 127\\.0\\.0\\.1:${closed.port} after \\d+ attempts in 3 s \\(DATABASE_CONNECT_TIMEOUT_S\\): ECONNREFUSED`));
    expect(fatal[0]!.err).toBeUndefined();
    // Started, retried about 3 s, gave up: not the 30 s default, and not at once.
    expect(performance.now() - startedAt).toBeGreaterThan(2500);
  });

  const serverUrl = process.env.TEST_DATABASE_URL;
  it.skipIf(!serverUrl)('a database that comes up during the wait: the service starts once it answers', { timeout: 120_000 }, async () => {
    // A database of its own on the test server, reached through a proxy that listens only once the
    // service has said it could not reach it.
    const admin = postgres(serverUrl!, { max: 1, onnotice: () => {} });
    const name = `first_hour_${process.pid}_${Date.now()}`;
    await admin.unsafe(`create database ${name}`);
    const target = new URL(serverUrl!);
    const proxyPort = await freePort();
    const proxy = createServer((socket) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    const url = new URL(serverUrl!);
    url.host = `127.0.0.1:${proxyPort}`;
    url.pathname = `/${name}`;
    const port = await freePort();
    try {
      const server = await run({ DATABASE_URL: url.toString(), LOG_LEVEL: 'info', PORT: String(port) });
      try {
        await until(() => lines(server.output()).some((l) => /database not reachable/.test(l.msg)), 60_000);
        proxy.listen(proxyPort, '127.0.0.1');
        await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true, 60_000);
        expect(lines(server.output()).some((l) => l.msg === `database reachable at 127.0.0.1:${proxyPort}`)).toBe(true);
      } finally {
        expect((await server.stop()).code).toBe(0);
      }
    } finally {
      proxy.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('ports in use', () => {
  it.concurrent('PORT taken: one fatal line naming PORT', { timeout: 90_000 }, async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const server = await run({ PORT: String(port) });
      const exit = await server.exited;
      expect(exit.code, server.output()).toBe(1);
      const fatal = lines(server.output()).filter((l) => l.level === 60);
      expect(fatal.map((l) => l.msg)).toEqual([`PORT ${port} on 127.0.0.1 is already in use (EADDRINUSE): choose another with PORT/HOST`]);
    } finally {
      taken.close();
    }
  });

  it.concurrent('the media port taken: the fatal line names RTC_MIN_PORT/RTC_MAX_PORT', { timeout: 90_000 }, async () => {
    const rtc = childServerRtcPorts(1);
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(rtc.min, '127.0.0.1', resolve));
    try {
      const server = await run({ RTC_MIN_PORT: String(rtc.min), RTC_MAX_PORT: String(rtc.max) });
      const exit = await server.exited;
      expect(exit.code, server.output()).toBe(1);
      const fatal = lines(server.output()).filter((l) => l.level === 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]!.msg).toContain(`port ${rtc.min}`);
      expect(fatal[0]!.msg).toContain('RTC_MIN_PORT/RTC_MAX_PORT');
    } finally {
      udp.close();
    }
  });
});
