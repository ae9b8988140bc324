// The loopback UDP ports a recording's ffmpeg listens on: a pair per track (RTP on p, RTCP on p + 1, as
// ffmpeg's SDP input expects), found free by binding them, and held for the recording until it gives
// them back so that two recordings starting at once never get the same pair. ffmpeg has opened its
// ports once the kernel's table lists them (portsBound).
import { createSocket, type Socket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { endianness } from 'node:os';
import { ipv6Groups } from '../../http/ip-address.js';
import { RelayError } from '../errors.js';

export interface PortPairs {
  /** A port p of loopback with p + 1 free too (RTP and RTCP of one track), not handed to another recording. */
  take(): Promise<number>;
  /** The pair starting at `port` is free again. */
  give(port: number): void;
}

/** Port pairs on `address` (the loopback address ffmpeg binds, rtp-source.ts). */
export function createPortPairs(address: string): PortPairs {
  /** Ports handed to a recording's ffmpeg and not yet given back. */
  const inUse = new Set<number>();
  return {
    async take() {
      for (let attempt = 0; attempt < 32; attempt++) {
        const first = await bindUdp(address, 0);
        const port = first.address().port;
        const second = port < 65535 && !inUse.has(port) && !inUse.has(port + 1) ? await bindUdp(address, port + 1).catch(() => undefined) : undefined;
        first.close();
        second?.close();
        if (second) {
          inUse.add(port);
          inUse.add(port + 1);
          return port;
        }
      }
      throw new RelayError('MEDIASOUP_ERROR', 'no free loopback port pair for a recording');
    },
    give(port) {
      inUse.delete(port);
      inUse.delete(port + 1);
    },
  };
}

function bindUdp(address: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
    socket.once('error', (error) => {
      socket.close();
      reject(error);
    });
    socket.bind(port, address, () => resolve(socket));
  });
}

/**
 * Whether a socket is bound to each of `ports` on `address` (or on the wildcard address), read from the
 * kernel's table of UDP sockets (Linux: /proc/net/udp, /proc/net/udp6), once for all of them, without
 * binding the ports. A test bind holds the port for a moment, and ffmpeg binding it in that moment fails
 * with "bind failed: Address already in use": the recording's start then failed now and then. Where there
 * is no such table (not Linux: a development machine), a test bind still answers.
 */
export async function portsBound(address: string, ports: readonly number[]): Promise<boolean> {
  const family = isIP(address) === 6 ? 6 : 4;
  const table = await readFile(family === 6 ? '/proc/net/udp6' : '/proc/net/udp', 'utf8').catch(() => undefined);
  if (table === undefined) return (await Promise.all(ports.map((port) => bindHeld(address, port)))).every(Boolean);
  const addresses = new Set([tableAddress(address), tableAddress(family === 6 ? '::' : '0.0.0.0')]);
  const bound = new Set<number>();
  for (const line of table.split('\n').slice(1)) {
    // "  sl  local_address rem_address st …": the local address is the second field, "<address>:<port>" in hex.
    const local = line.trim().split(/\s+/)[1];
    const colon = local?.lastIndexOf(':') ?? -1;
    if (colon > 0 && addresses.has(local!.slice(0, colon))) bound.add(parseInt(local!.slice(colon + 1), 16));
  }
  return ports.every((port) => bound.has(port));
}

/** Whether a bind of `port` on `address` fails. */
async function bindHeld(address: string, port: number): Promise<boolean> {
  try {
    (await bindUdp(address, port)).close();
    return false;
  } catch {
    return true;
  }
}

/**
 * An address as the kernel's table writes it: each 32-bit word of the address in hex as the machine
 * holds it (on a little-endian machine 127.0.0.1 is 0100007F).
 */
export function tableAddress(address: string): string {
  const bytes = addressBytes(address);
  const words: string[] = [];
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4);
    if (endianness() === 'LE') word.reverse();
    words.push(word.map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(''));
  }
  return words.join('');
}

/** The 4 or 16 bytes of an IPv4 or IPv6 address. */
function addressBytes(address: string): number[] {
  if (isIP(address) === 4) return address.split('.').map(Number);
  if (isIP(address) !== 6) throw new Error(`not an IP address: ${address}`);
  return ipv6Groups(address.split('%')[0]!).flatMap((group) => [group >> 8, group & 0xff]);
}
