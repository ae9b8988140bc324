// Where a recording's ffmpeg listens and whose RTP it takes. ffmpeg binds its sockets to a loopback
// address only (never a wildcard: RTP sent to an open port landed in the file), and its SDP names the one
// address the relay's plain transports send from (`a=source-filter`), so ffmpeg drops packets of any other
// source address. The relay sends from MEDIASOUP_PLAIN_LISTEN_IP: that address when it is a specific one,
// the loopback address the kernel picks for a loopback destination when it is a wildcard.
import { isIP } from 'node:net';

export interface RecordingAddresses {
  /** What ffmpeg binds to and the plain transports send to: a loopback address. */
  readonly listen: string;
  /** The only source address ffmpeg accepts: the one the relay's plain transports send from. */
  readonly source: string;
  readonly family: 4 | 6;
}

const isLoopback = (ip: string, family: 4 | 6) => (family === 4 ? ip.startsWith('127.') : ip === '::1');
const isWildcard = (ip: string) => ip === '0.0.0.0' || ip === '::';

/** The addresses a recording uses, from the plain transports' listen address. */
export function recordingAddresses(plainListenIp: string): RecordingAddresses {
  const family = isIP(plainListenIp) === 6 ? 6 : 4;
  const loopback = family === 4 ? '127.0.0.1' : '::1';
  if (isLoopback(plainListenIp, family)) return { listen: plainListenIp, source: plainListenIp, family };
  if (isWildcard(plainListenIp)) return { listen: loopback, source: loopback, family };
  return { listen: loopback, source: plainListenIp, family };
}
