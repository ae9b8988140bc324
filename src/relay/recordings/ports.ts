// The loopback UDP ports a recording's ffmpeg listens on: a pair per track (RTP on p, RTCP on p + 1, as
// ffmpeg's SDP input expects), found free by binding them, and held for the recording until it gives
// them back so that two recordings starting at once never get the same pair. ffmpeg has opened its
// ports once a bind of them fails (portHeld).
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
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

/** Whether something holds `port` on `address`: a bind of it fails. */
export async function portHeld(address: string, port: number): Promise<boolean> {
  try {
    (await bindUdp(address, port)).close();
    return false;
  } catch {
    return true;
  }
}
