// Issue 28: deploy/coturn as Fly.io runs it. The entrypoint fills exactly the template's placeholders;
// fly.toml opens the ports the template listens and relays on; and the rendered template is a config
// Debian's turnserver runs with, checking the relay's credentials (a fresh one allocates, another
// secret's is refused): rendered here for 127.0.0.1 with a free port instead of Fly's addresses.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { iceServersFor } from '../../src/turn/index.js';
import { freePort, runTurnserver } from '../support/coturn.js';
import { skipWithout, TURN_SERVER } from '../support/system-programs.js';
import { turnAllocate } from '../support/turn-allocate.js';

const dir = new URL('../../deploy/coturn/', import.meta.url);
const template = readFileSync(new URL('turnserver.conf.template', dir), 'utf8');
const entrypoint = readFileSync(new URL('entrypoint.sh', dir), 'utf8');
const dockerfile = readFileSync(new URL('Dockerfile', dir), 'utf8');
const fly = parse(readFileSync(new URL('fly.toml', dir), 'utf8')) as { env: Record<string, string>; services: Array<{ protocol: string; internal_port: number; ports: Array<Record<string, unknown>> }> };

/** `key=value` lines of the template (comments and blank lines dropped). */
const settings = template
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const valuesOf = (key: string) => settings.filter((line) => line.startsWith(`${key}=`)).map((line) => line.slice(key.length + 1));

describe('deploy/coturn', () => {
  it("the entrypoint substitutes every placeholder of the template, and only those", () => {
    const placeholders = new Set([...template.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1]));
    const substituted = /envsubst '([^']+)'/.exec(entrypoint)?.[1];
    expect(new Set([...(substituted ?? '').matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1]))).toEqual(placeholders);
    expect(dockerfile).toMatch(/apt-get install [^\n]*coturn/);
    expect(dockerfile).toMatch(/^FROM docker\.io\/library\/debian:/m);
  });

  it('uses the relay’s credentials (use-auth-secret), no CLI, no private or loopback peers', () => {
    expect(settings).toContain('use-auth-secret');
    expect(valuesOf('static-auth-secret')).toEqual(['${TURN_SECRET}']);
    expect(settings).toContain('no-cli');
    for (const range of ['10.0.0.0-10.255.255.255', '127.0.0.0-127.255.255.255', '172.16.0.0-172.31.255.255', '192.168.0.0-192.168.255.255', 'fc00::-fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']) {
      expect(valuesOf('denied-peer-ip')).toContain(range);
    }
    expect(settings).not.toContain('allow-loopback-peers');
  });

  it('fly.toml opens UDP and TCP 3478, TLS on 443 and the relay port range the template gives', () => {
    const port = Number(valuesOf('listening-port')[0]);
    const open = fly.services.map((service) => ({ protocol: service.protocol, internal: service.internal_port, ports: service.ports }));
    expect(open).toContainEqual({ protocol: 'udp', internal: port, ports: [{ port }] });
    expect(open).toContainEqual({ protocol: 'tcp', internal: port, ports: [{ port }] });
    expect(open).toContainEqual({ protocol: 'tcp', internal: port, ports: [{ port: 443, handlers: ['tls'] }] });
    const min = Number(fly.env.MIN_PORT);
    const max = Number(fly.env.MAX_PORT);
    expect(open).toContainEqual({ protocol: 'udp', internal: min, ports: [{ start_port: min, end_port: max }] });
    expect(valuesOf('min-port')).toEqual(['${MIN_PORT}']);
    expect(valuesOf('max-port')).toEqual(['${MAX_PORT}']);
  });

  it.skipIf(skipWithout(TURN_SERVER))('renders into a config turnserver runs, checking the relay’s credentials', { timeout: 60_000 }, async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'coturn-template-'));
    const secret = 'template-test-secret-0123456789';
    const port = await freePort('127.0.0.1');
    const values: Record<string, string> = { TURN_SECRET: secret, TURN_REALM: 'turn.test', EXTERNAL_IP: '127.0.0.1', UDP_IP: '127.0.0.1', TCP_IP: '127.0.0.1', MIN_PORT: '49152', MAX_PORT: '49251' };
    // What envsubst does, then this machine's paths and a free port in place of the image's and 3478.
    const rendered = template
      .replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => values[name] ?? '')
      .replaceAll('/var/lib/coturn', work)
      .replace(/^listening-port=\d+$/m, `listening-port=${port}`)
      .replace(/^log-file=stdout$/m, `log-file=${path.join(work, 'turnserver.log')}`);
    const configFile = path.join(work, 'turnserver.conf');
    writeFileSync(configFile, rendered, { mode: 0o600 });
    const log = () => {
      try {
        return readFileSync(path.join(work, 'turnserver.log'), 'utf8');
      } catch {
        return '';
      }
    };
    const child = await runTurnserver(configFile, '127.0.0.1', [port], log).catch((error: unknown) => {
      rmSync(work, { recursive: true, force: true });
      throw error;
    });
    try {
      const turn = { urls: [`turn:127.0.0.1:${port}`], secret, credentialTtlS: 600 };
      const fresh = iceServersFor(turn, 'alice', new Date()).iceServers[0]!;
      expect(await turnAllocate('127.0.0.1', port, fresh.username, fresh.credential), log()).toMatchObject({ ok: true });
      const foreign = iceServersFor({ ...turn, secret: 'another-secret-0123456789' }, 'alice', new Date()).iceServers[0]!;
      expect(await turnAllocate('127.0.0.1', port, foreign.username, foreign.credential)).toMatchObject({ ok: false, errorCode: 401 });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }
      rmSync(work, { recursive: true, force: true });
    }
  });
});
