// A private coturn (Debian's `turnserver`) for the TURN tests: the shipped configuration
// (deploy/coturn/turnserver.conf.template, rendered as its entrypoint does, with the same peer policy
// and bounds) on one address the test owns, with free ports for UDP/TCP and a TLS listener of its own
// (a self-signed certificate for turns:, where Fly's proxy terminates TLS in front of the shipped one).
// It relays only to the relay's media address the test names. Started by the test, killed by stop()
// (also when the start fails), its folder (config, certificate, database, log) removed with it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TURN_SERVER } from './system-programs.js';

export { TURN_SERVER } from './system-programs.js';

export const TURN_REALM = 'chat-backend.test';

export interface CoturnOptions {
  /** The address coturn listens on and relays from (its relay-ip). */
  ip: string;
  /** coturn's static-auth-secret. */
  secret: string;
  /** The relay's media address (MEDIASOUP_ANNOUNCED_IP): the only peer coturn relays to (allowed-peer-ip). */
  mediaIp: string;
  /** The relayed addresses' ports (min-port, max-port); the shipped range (deploy/coturn/fly.toml) by default. */
  relayPorts?: { min: number; max: number };
}

export interface Coturn {
  ip: string;
  /** UDP and TCP (listening-port). */
  port: number;
  /** TLS (tls-listening-port). */
  tlsPort: number;
  /**
   * base64 SHA-256 of the certificate's public key: what Chromium's --ignore-certificate-errors-spki-list
   * takes to trust this one self-signed certificate (and nothing else) for turns:.
   */
  spkiSha256: string;
  /** The URLs a TURN_URLS would list: UDP, TCP, TLS. */
  urls: { udp: string; tcp: string; tls: string };
  /** What coturn logged so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

const COTURN_DIR = new URL('../../deploy/coturn/', import.meta.url);

/** What deploy/coturn/entrypoint.sh hands envsubst. */
export interface CoturnTemplateValues {
  TURN_SECRET: string;
  TURN_REALM: string;
  EXTERNAL_IP: string;
  UDP_IP: string;
  TCP_IP: string;
  MIN_PORT: string;
  MAX_PORT: string;
  TOTAL_QUOTA: string;
  MEDIASOUP_ANNOUNCED_IP: string;
}

/** The relay port range deploy/coturn/fly.toml gives the entrypoint (MIN_PORT, MAX_PORT). */
export function shippedRelayPorts(): { min: number; max: number } {
  const toml = readFileSync(new URL('fly.toml', COTURN_DIR), 'utf8');
  const value = (name: string) => Number(new RegExp(`^\\s*${name} = "(\\d+)"`, 'm').exec(toml)?.[1]);
  return { min: value('MIN_PORT'), max: value('MAX_PORT') };
}

/** The entrypoint's total-quota: half the relay ports (an allocation may reserve a second one, EVEN-PORT). */
export function totalQuotaFor(ports: { min: number; max: number }): number {
  return Math.floor((ports.max - ports.min + 1) / 2);
}

/** deploy/coturn/turnserver.conf.template with its placeholders filled, as envsubst does. */
export function renderCoturnTemplate(values: CoturnTemplateValues): string {
  const template = readFileSync(new URL('turnserver.conf.template', COTURN_DIR), 'utf8');
  return template.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
    const value = (values as unknown as Record<string, string | undefined>)[name];
    if (value === undefined) throw new Error(`the coturn template names \${${name}}, which the test does not fill`);
    return value;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free for both TCP and UDP on `ip`. */
export async function freePort(ip: string, avoid: number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, ip, () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    if (avoid.includes(port)) continue;
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket(ip.includes(':') ? 'udp6' : 'udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, ip, () => socket.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error(`no free TCP+UDP port on ${ip}`);
}

/**
 * Runs `turnserver -c configFile` until it listens on every one of `ports` (TCP) on `ip`, at most 15 s;
 * `log` reads its log for the error message. Kill the returned child to stop it.
 */
export async function runTurnserver(configFile: string, ip: string, ports: number[], log: () => string): Promise<ChildProcess> {
  const child = spawn(TURN_SERVER.path, ['-c', configFile], { stdio: 'ignore' });
  const until = Date.now() + 15_000;
  try {
    for (;;) {
      const listening = await Promise.all(ports.map((port) => accepts(ip, port)));
      if (listening.every(Boolean)) return child;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`turnserver exited at start-up:\n${log()}`);
      if (Date.now() > until) throw new Error(`turnserver did not listen on ${ip}:${ports.join(', :')} within 15 s:\n${log()}`);
      await sleep(100);
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function accepts(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, ip);
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** @example const turn = await startCoturn({ ip: '127.0.0.1', secret, allowedPeers: ['127.0.0.1'] }); afterAll(() => turn.stop()) */
export async function startCoturn(options: CoturnOptions): Promise<Coturn> {
  const dir = mkdtempSync(path.join(tmpdir(), 'coturn-'));
  let child: ChildProcess | undefined;
  const logFile = path.join(dir, 'turnserver.log');
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running && running.exitCode === null && running.signalCode === null) {
      const gone = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  try {
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=turn.test', '-addext', `subjectAltName=IP:${options.ip},DNS:turn.test`],
      { stdio: 'ignore', timeout: 30_000 },
    );
    const spkiSha256 = execFileSync('sh', ['-c', `openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`, 'spki', cert], {
      encoding: 'utf8',
      timeout: 10_000,
    }).trim();
    const port = await freePort(options.ip);
    const tlsPort = await freePort(options.ip, [port]);
    const relayPorts = options.relayPorts ?? shippedRelayPorts();
    const shipped = renderCoturnTemplate({
      TURN_SECRET: options.secret,
      TURN_REALM,
      EXTERNAL_IP: options.ip,
      UDP_IP: options.ip,
      TCP_IP: options.ip,
      MIN_PORT: String(relayPorts.min),
      MAX_PORT: String(relayPorts.max),
      TOTAL_QUOTA: String(totalQuotaFor(relayPorts)),
      MEDIASOUP_ANNOUNCED_IP: options.mediaIp,
    });
    // The shipped file with this machine's folder and free ports, and TLS served by coturn itself.
    const config = shipped
      .replaceAll('/var/lib/coturn', dir)
      .replace(/^listening-port=\d+$/m, `listening-port=${port}`)
      .replace(/^no-tls$/m, [`tls-listening-port=${tlsPort}`, `cert=${cert}`, `pkey=${key}`].join('\n'))
      .replace(/^log-file=stdout$/m, [`log-file=${logFile}`, 'no-stdout-log'].join('\n'))
      .split('\n');
    // coturn refuses loopback peers unless told; the policy above still allows the one address only.
    if (options.mediaIp.startsWith('127.') || options.mediaIp === '::1') config.push('allow-loopback-peers');
    const configFile = path.join(dir, 'turnserver.conf');
    writeFileSync(configFile, `${config.join('\n')}\n`, { mode: 0o600 });
    child = await runTurnserver(configFile, options.ip, [port, tlsPort], log);
    const host = options.ip.includes(':') ? `[${options.ip}]` : options.ip;
    return {
      ip: options.ip,
      port,
      tlsPort,
      spkiSha256,
      urls: { udp: `turn:${host}:${port}?transport=udp`, tcp: `turn:${host}:${port}?transport=tcp`, tls: `turns:${host}:${tlsPort}?transport=tcp` },
      log,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
