// A private coturn (Debian's `turnserver`) for the TURN tests (issue 28): a generated config with
// use-auth-secret and a static-auth-secret (the TURN REST scheme src/turn answers in), a realm, no CLI,
// a self-signed certificate for turns:, one address the test owns with free ports for UDP/TCP and TLS,
// relaying only from that address to the peers the test allows. Started by the test, killed by stop()
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
  /** Peers coturn may relay to (allowed-peer-ip): the relay's media address. Loopback peers are refused otherwise. */
  allowedPeers: string[];
  /** The relayed addresses' ports (min-port, max-port); coturn's default is 49152-65535. */
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
    const config = [
      `listening-ip=${options.ip}`,
      `relay-ip=${options.ip}`,
      `listening-port=${port}`,
      `tls-listening-port=${tlsPort}`,
      // No second port pair for RFC 5780 NAT discovery, no DTLS, no CLI, no web admin: the three listeners asked for only.
      'no-rfc5780',
      'no-dtls',
      'no-cli',
      'no-software-attribute',
      'use-auth-secret',
      `static-auth-secret=${options.secret}`,
      `realm=${TURN_REALM}`,
      'fingerprint',
      `cert=${cert}`,
      `pkey=${key}`,
      `userdb=${path.join(dir, 'turndb')}`,
      `pidfile=${path.join(dir, 'turnserver.pid')}`,
      `log-file=${logFile}`,
      'simple-log',
      'no-stdout-log',
      'no-multicast-peers',
      ...(options.relayPorts ? [`min-port=${options.relayPorts.min}`, `max-port=${options.relayPorts.max}`] : []),
      ...options.allowedPeers.map((peer) => `allowed-peer-ip=${peer}`),
      ...(options.allowedPeers.some((peer) => peer.startsWith('127.') || peer === '::1') ? ['allow-loopback-peers'] : []),
    ];
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
