// A TURN client (RFC 5766 with RFC 5389's long-term credentials, and RFC 6062's Connect), written out
// here so the tests see exactly what coturn answered: the first request draws the 401 with realm and
// nonce, every later one carries USERNAME, REALM, NONCE and MESSAGE-INTEGRITY keyed with
// MD5(username:realm:password) (a 438 Stale Nonce is retried once with the new nonce). Over UDP or over
// a TCP control connection (STUN messages back to back on the stream).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createConnection, isIPv4, type Socket } from 'node:net';

const MAGIC_COOKIE = 0x2112a442;
const METHOD = { allocate: 0x0003, refresh: 0x0004, send: 0x0006, data: 0x0007, createPermission: 0x0008, connect: 0x000a } as const;
const SUCCESS = 0x0100;
const ERROR = 0x0110;
const INDICATION = 0x0010;
const ATTR = {
  username: 0x0006,
  integrity: 0x0008,
  errorCode: 0x0009,
  lifetime: 0x000d,
  xorPeerAddress: 0x0012,
  data: 0x0013,
  realm: 0x0014,
  nonce: 0x0015,
  relayedAddress: 0x0016,
  requestedTransport: 0x0019,
} as const;

export type TurnFailure = { ok: false; errorCode: number; reason: string };
export type AllocateOutcome = { ok: true; relayedPort: number; lifetime: number } | TurnFailure;
export type RequestOutcome = { ok: true } | TurnFailure;

type Parsed = { type: number; transactionId: Buffer; attributes: Map<number, Buffer> };

function attribute(type: number, value: Buffer): Buffer {
  const padded = Buffer.alloc(4 + Math.ceil(value.length / 4) * 4);
  padded.writeUInt16BE(type, 0);
  padded.writeUInt16BE(value.length, 2);
  value.copy(padded, 4);
  return padded;
}

function message(type: number, attributes: Buffer[], integrityKey?: Buffer): Buffer {
  const header = Buffer.alloc(20);
  header.writeUInt16BE(type, 0);
  header.writeUInt32BE(MAGIC_COOKIE, 4);
  randomBytes(12).copy(header, 8);
  let body = Buffer.concat(attributes);
  if (integrityKey) {
    // MESSAGE-INTEGRITY covers the message with its length already counting the 24 bytes of the attribute.
    header.writeUInt16BE(body.length + 24, 2);
    const hmac = createHmac('sha1', integrityKey).update(Buffer.concat([header, body])).digest();
    body = Buffer.concat([body, attribute(ATTR.integrity, hmac)]);
  }
  header.writeUInt16BE(body.length, 2);
  return Buffer.concat([header, body]);
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

function parse(answer: Buffer): Parsed {
  const type = answer.readUInt16BE(0);
  const length = answer.readUInt16BE(2);
  const attributes = new Map<number, Buffer>();
  for (let at = 20; at + 4 <= 20 + length; ) {
    const attrType = answer.readUInt16BE(at);
    const attrLength = answer.readUInt16BE(at + 2);
    attributes.set(attrType, answer.subarray(at + 4, at + 4 + attrLength));
    at += 4 + Math.ceil(attrLength / 4) * 4;
  }
  return { type, transactionId: answer.subarray(8, 20), attributes };
}

function errorOf(attributes: Map<number, Buffer>): TurnFailure {
  const value = attributes.get(ATTR.errorCode);
  if (!value) return { ok: false, errorCode: 0, reason: 'no ERROR-CODE' };
  return { ok: false, errorCode: (value[2]! & 0x7) * 100 + value[3]!, reason: value.subarray(4).toString('utf8') };
}

/** XOR-PEER-ADDRESS for an IPv4 peer (the tests' peers are IPv4). */
function xorPeerAddress(ip: string, port: number): Buffer {
  if (!isIPv4(ip)) throw new Error(`the test client writes IPv4 peers only, got ${ip}`);
  const value = Buffer.alloc(8);
  value.writeUInt8(0x01, 1);
  value.writeUInt16BE(port ^ (MAGIC_COOKIE >>> 16), 2);
  const address = ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  value.writeUInt32BE((address ^ MAGIC_COOKIE) >>> 0, 4);
  return attribute(ATTR.xorPeerAddress, value);
}

function readXorAddress(value: Buffer): { ip: string; port: number } {
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16);
  const address = (value.readUInt32BE(4) ^ MAGIC_COOKIE) >>> 0;
  return { ip: [address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff].join('.'), port };
}

export interface TurnSessionOptions {
  ip: string;
  port: number;
  username: string;
  password: string;
  /** How the client reaches coturn: UDP (default) or a TCP control connection. */
  control?: 'udp' | 'tcp';
  /** Per request; default 3000 ms. */
  timeoutMs?: number;
}

/** One client of coturn: at most one allocation, its permissions and the data it received. */
export interface TurnSession {
  /** Allocate a relayed address: UDP (RFC 5766) or TCP (RFC 6062); `lifetime` asked for, in seconds. */
  allocate(options?: { transport?: 'udp' | 'tcp'; lifetime?: number }): Promise<AllocateOutcome>;
  createPermission(peerIp: string): Promise<RequestOutcome>;
  /** A Send indication (no answer: coturn drops it silently when the peer has no permission). */
  send(peerIp: string, peerPort: number, data: Buffer): void;
  /** RFC 6062 Connect to a peer over a TCP allocation. */
  connect(peerIp: string, peerPort: number): Promise<RequestOutcome>;
  refresh(lifetime: number): Promise<RequestOutcome>;
  /** Data indications received so far: who sent what. */
  received: Array<{ ip: string; port: number; data: Buffer }>;
  /** Releases the allocation (Refresh with lifetime 0) if there is one, and closes the socket. */
  close(): Promise<void>;
}

export async function openTurnSession(options: TurnSessionOptions): Promise<TurnSession> {
  const { ip, port, username, password, control = 'udp', timeoutMs = 3000 } = options;
  const listeners = new Set<(parsed: Parsed) => void>();
  const received: TurnSession['received'] = [];
  const dispatch = (raw: Buffer) => {
    if (raw.length < 20) return;
    const parsed = parse(raw);
    if (parsed.type === (METHOD.data | INDICATION)) {
      const peer = parsed.attributes.get(ATTR.xorPeerAddress);
      const data = parsed.attributes.get(ATTR.data);
      if (peer && data) received.push({ ...readXorAddress(peer), data: Buffer.from(data) });
      return;
    }
    for (const listener of listeners) listener(parsed);
  };
  let write: (packet: Buffer) => void;
  let closeSocket: () => void;
  if (control === 'udp') {
    const socket = createSocket(ip.includes(':') ? 'udp6' : 'udp4');
    socket.on('message', dispatch);
    await new Promise<void>((resolve) => socket.bind(0, resolve));
    write = (packet) => socket.send(packet, port, ip);
    closeSocket = () => socket.close();
  } else {
    const socket: Socket = await new Promise((resolve, reject) => {
      const s = createConnection(port, ip);
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    });
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 20) {
        const total = 20 + buffered.readUInt16BE(2);
        if (buffered.length < total) break;
        dispatch(buffered.subarray(0, total));
        buffered = buffered.subarray(total);
      }
    });
    socket.on('error', () => {});
    write = (packet) => socket.write(packet);
    closeSocket = () => socket.destroy();
  }

  const exchange = (request: Buffer) =>
    new Promise<Parsed>((resolve, reject) => {
      const id = request.subarray(8, 20);
      // Over UDP the request is sent again, as STUN clients do (RFC 8489 6.2.1: RTO 500 ms, doubling):
      // a datagram lost, or sent before a server just started had bound its UDP socket, is not a failure.
      let rto = 500;
      let resend: NodeJS.Timeout | undefined;
      const retransmit = () => {
        resend = setTimeout(() => {
          write(request);
          rto *= 2;
          retransmit();
        }, rto);
      };
      const timer = setTimeout(() => {
        clearTimeout(resend);
        listeners.delete(onAnswer);
        reject(new Error(`no answer from ${ip}:${port} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onAnswer = (answer: Parsed) => {
        if (!answer.transactionId.equals(id)) return;
        clearTimeout(timer);
        clearTimeout(resend);
        listeners.delete(onAnswer);
        resolve(answer);
      };
      listeners.add(onAnswer);
      write(request);
      if (control === 'udp') retransmit();
    });

  let realm: Buffer | undefined;
  let nonce: Buffer | undefined;
  let key: Buffer | undefined;
  const auth = () => [attribute(ATTR.username, Buffer.from(username, 'utf8')), attribute(ATTR.realm, realm!), attribute(ATTR.nonce, nonce!)];
  /** An authenticated request; a 438 (stale nonce) is retried once with the nonce it carries. */
  const request = async (method: number, attributes: Buffer[]): Promise<Parsed> => {
    if (!key) {
      const challenge = await exchange(message(method, attributes));
      realm = challenge.attributes.get(ATTR.realm);
      nonce = challenge.attributes.get(ATTR.nonce);
      if (!realm || !nonce) return challenge;
      key = createHash('md5').update(`${username}:${realm.toString('utf8')}:${password}`).digest();
    }
    let answer = await exchange(message(method, [...attributes, ...auth()], key));
    if (answer.type === (method | ERROR) && errorOf(answer.attributes).errorCode === 438) {
      nonce = answer.attributes.get(ATTR.nonce) ?? nonce;
      answer = await exchange(message(method, [...attributes, ...auth()], key));
    }
    return answer;
  };
  const outcome = (method: number, answer: Parsed): RequestOutcome => (answer.type === (method | SUCCESS) ? { ok: true } : errorOf(answer.attributes));

  let allocated = false;
  const session: TurnSession = {
    received,
    async allocate({ transport = 'udp', lifetime } = {}) {
      const attributes = [attribute(ATTR.requestedTransport, Buffer.from([transport === 'udp' ? 17 : 6, 0, 0, 0]))];
      if (lifetime !== undefined) attributes.push(attribute(ATTR.lifetime, u32(lifetime)));
      const answer = await request(METHOD.allocate, attributes);
      if (answer.type !== (METHOD.allocate | SUCCESS)) return errorOf(answer.attributes);
      allocated = true;
      const relayed = answer.attributes.get(ATTR.relayedAddress);
      return { ok: true, relayedPort: relayed ? readXorAddress(relayed).port : 0, lifetime: answer.attributes.get(ATTR.lifetime)?.readUInt32BE(0) ?? 0 };
    },
    async createPermission(peerIp) {
      return outcome(METHOD.createPermission, await request(METHOD.createPermission, [xorPeerAddress(peerIp, 0)]));
    },
    send(peerIp, peerPort, data) {
      write(message(METHOD.send | INDICATION, [xorPeerAddress(peerIp, peerPort), attribute(ATTR.data, data)]));
    },
    async connect(peerIp, peerPort) {
      return outcome(METHOD.connect, await request(METHOD.connect, [xorPeerAddress(peerIp, peerPort)]));
    },
    async refresh(lifetime) {
      const answer = await request(METHOD.refresh, [attribute(ATTR.lifetime, u32(lifetime))]);
      if (answer.type === (METHOD.refresh | SUCCESS) && lifetime === 0) allocated = false;
      return outcome(METHOD.refresh, answer);
    },
    async close() {
      try {
        if (allocated) await session.refresh(0).catch(() => undefined);
      } finally {
        closeSocket();
      }
    },
  };
  return session;
}

/**
 * Allocates a UDP relay on coturn at `ip:port` with these credentials, then releases it (Refresh with
 * lifetime 0). Whether coturn accepted them, or the error it answered (401 for refused credentials).
 */
export async function turnAllocate(ip: string, port: number, username: string, password: string, timeoutMs = 3000): Promise<AllocateOutcome> {
  const session = await openTurnSession({ ip, port, username, password, timeoutMs });
  try {
    return await session.allocate();
  } finally {
    await session.close();
  }
}
