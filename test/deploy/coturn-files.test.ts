// deploy/coturn as Fly.io runs it. The entrypoint fills exactly the template's placeholders and refuses
// to start without the relay's address; fly.toml opens the ports the template listens and relays on,
// the range docs/deploy-fly.md sizes; the template relays to the relay's address only, with bounds; and
// the rendered template is a config Debian's turnserver runs with, checking the relay's credentials (a
// fresh one allocates, another secret's is refused): rendered here for 127.0.0.1 with a free port
// instead of Fly's addresses.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { iceServersFor } from '../../src/turn/index.js';
import { freePort, renderCoturnTemplate, runTurnserver, shippedRelayPorts, totalQuotaFor } from '../support/coturn.js';
import { skipWithout, TURN_SERVER } from '../support/system-programs.js';
import { openTurnSession, turnAllocate } from '../support/turn-allocate.js';

const dir = new URL('../../deploy/coturn/', import.meta.url);
const template = readFileSync(new URL('turnserver.conf.template', dir), 'utf8');
const entrypoint = readFileSync(new URL('entrypoint.sh', dir), 'utf8');
const dockerfile = readFileSync(new URL('Dockerfile', dir), 'utf8');
const deployDoc = readFileSync(new URL('../../docs/deploy-fly.md', import.meta.url), 'utf8');
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

  it('uses the relay’s credentials (use-auth-secret), no CLI', () => {
    expect(settings).toContain('use-auth-secret');
    expect(valuesOf('static-auth-secret')).toEqual(['${TURN_SECRET}']);
    expect(settings).toContain('no-cli');
  });

  it('relays over UDP to the relay’s MEDIASOUP_ANNOUNCED_IP only: every other IPv4 and IPv6 peer denied, no TCP relay', () => {
    expect(settings).toContain('no-tcp-relay');
    expect(valuesOf('denied-peer-ip')).toEqual(['0.0.0.0-255.255.255.255', '::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']);
    expect(valuesOf('allowed-peer-ip')).toEqual(['${MEDIASOUP_ANNOUNCED_IP}']);
    expect(settings).not.toContain('allow-loopback-peers');
    // The comment above the rules says what is allowed.
    expect(template).toMatch(/#[^\n]*relays to one address only, the chat relay's MEDIASOUP_ANNOUNCED_IP/);
  });

  it('bounds allocations: 8 per user, a total of half the relay ports, 120 s unless refreshed, nonces of 300 s', () => {
    expect(valuesOf('user-quota')).toEqual(['8']);
    expect(valuesOf('total-quota')).toEqual(['${TOTAL_QUOTA}']);
    expect(valuesOf('max-allocate-lifetime')).toEqual(['120']);
    expect(valuesOf('stale-nonce')).toEqual(['300']);
    expect(valuesOf('max-bps')).toEqual(['1500000']);
  });

  it('sizes the relay ports for the participants docs/deploy-fly.md names: 100 at their quota of 8, two ports an allocation', () => {
    const ports = shippedRelayPorts();
    expect(ports).toEqual({ min: Number(fly.env.MIN_PORT), max: Number(fly.env.MAX_PORT) });
    const participants = Number(/sized for (\d+) participants/i.exec(deployDoc)?.[1]);
    expect(participants).toBe(100);
    expect(totalQuotaFor(ports)).toBe(participants * Number(valuesOf('user-quota')[0]));
    expect(deployDoc).toContain(`UDP ${ports.min}-${ports.max}`);
    expect(deployDoc).toContain(`total-quota=${totalQuotaFor(ports)}`);
  });

  it.skipIf(spawnSync('sh', ['-c', 'command -v envsubst']).status !== 0)('the entrypoint refuses to start without the relay’s address, and renders it and the total quota', () => {
    const work = mkdtempSync(path.join(tmpdir(), 'coturn-entrypoint-'));
    try {
      writeFileSync(path.join(work, 'turnserver.conf.template'), template);
      // The image's paths in a folder of the test's, and `cat` for turnserver: the config it would run.
      const script = entrypoint.replaceAll('/etc/coturn/', `${work}/`).replaceAll('/var/lib/coturn/', `${work}/`).replace(/^exec turnserver -c (.*)$/m, 'exec cat $1');
      const run = (env: Record<string, string>) => spawnSync('sh', ['-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8', timeout: 10_000 });
      const base = { TURN_SECRET: 'entrypoint-test-secret-0123456789', TURN_REALM: 'turn.test', EXTERNAL_IP: '192.0.2.10', UDP_IP: '127.0.0.1', TCP_IP: '127.0.0.1', MIN_PORT: fly.env.MIN_PORT!, MAX_PORT: fly.env.MAX_PORT! };
      const missing = run(base);
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toContain('MEDIASOUP_ANNOUNCED_IP');
      for (const name of ['relay.example.com', '203.0.113', '203.0.113.7; rm -rf /', '2001:db8::1 x']) {
        const refused = run({ ...base, MEDIASOUP_ANNOUNCED_IP: name });
        expect(refused.status, name).not.toBe(0);
        expect(refused.stderr, name).toContain('MEDIASOUP_ANNOUNCED_IP must be');
      }
      for (const address of ['203.0.113.7', '2001:db8::7']) {
        const rendered = run({ ...base, MEDIASOUP_ANNOUNCED_IP: address });
        expect(rendered.status, rendered.stderr).toBe(0);
        const lines = rendered.stdout.split('\n');
        expect(lines.filter((line) => line.startsWith('allowed-peer-ip='))).toEqual([`allowed-peer-ip=${address}`]);
        expect(lines).toContain(`total-quota=${totalQuotaFor(shippedRelayPorts())}`);
        expect(rendered.stdout).not.toMatch(/\$\{/);
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
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
    // What the entrypoint renders, then this machine's paths and a free port in place of the image's and 3478.
    const rendered = renderCoturnTemplate({
      TURN_SECRET: secret,
      TURN_REALM: 'turn.test',
      EXTERNAL_IP: '127.0.0.1',
      UDP_IP: '127.0.0.1',
      TCP_IP: '127.0.0.1',
      MIN_PORT: fly.env.MIN_PORT!,
      MAX_PORT: fly.env.MAX_PORT!,
      TOTAL_QUOTA: String(totalQuotaFor(shippedRelayPorts())),
      MEDIASOUP_ANNOUNCED_IP: '198.51.100.7',
    })
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
      // Permissions: the relay's address only (no packet is sent for a CreatePermission); no TCP relay.
      const session = await openTurnSession({ ip: '127.0.0.1', port, username: fresh.username, password: fresh.credential });
      try {
        expect(await session.allocate()).toMatchObject({ ok: true });
        expect(await session.createPermission('198.51.100.7'), log()).toEqual({ ok: true });
        for (const peer of ['198.51.100.8', '192.0.0.1', '198.18.0.1', '8.8.8.8', '127.0.0.1', '10.0.0.1']) {
          expect(await session.createPermission(peer), peer).toMatchObject({ ok: false, errorCode: 403 });
        }
      } finally {
        await session.close();
      }
      const tcp = await openTurnSession({ ip: '127.0.0.1', port, username: fresh.username, password: fresh.credential, control: 'tcp' });
      try {
        expect(await tcp.allocate({ transport: 'tcp' })).toMatchObject({ ok: false, errorCode: 442 });
      } finally {
        await tcp.close();
      }
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
