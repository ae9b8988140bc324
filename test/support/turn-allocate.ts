// A TURN Allocate over UDP (RFC 5766 with RFC 5389's long-term credentials), written out here so the
// tests see exactly what coturn answered: the first request draws the 401 with realm and nonce, the
// second carries USERNAME, REALM, NONCE and MESSAGE-INTEGRITY keyed with MD5(username:realm:password).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';

const MAGIC_COOKIE = 0x2112a442;
const ALLOCATE_REQUEST = 0x0003;
const ALLOCATE_SUCCESS = 0x0103;
const ALLOCATE_ERROR = 0x0113;
const REFRESH_REQUEST = 0x0004;
const ATTR = { username: 0x0006, integrity: 0x0008, errorCode: 0x0009, lifetime: 0x000d, realm: 0x0014, nonce: 0x0015, requestedTransport: 0x0019, relayedAddress: 0x0016 } as const;

export type AllocateOutcome = { ok: true; relayedPort: number } | { ok: false; errorCode: number; reason: string };

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

function parse(answer: Buffer): { type: number; attributes: Map<number, Buffer> } {
  const type = answer.readUInt16BE(0);
  const length = answer.readUInt16BE(2);
  const attributes = new Map<number, Buffer>();
  for (let at = 20; at + 4 <= 20 + length; ) {
    const attrType = answer.readUInt16BE(at);
    const attrLength = answer.readUInt16BE(at + 2);
    attributes.set(attrType, answer.subarray(at + 4, at + 4 + attrLength));
    at += 4 + Math.ceil(attrLength / 4) * 4;
  }
  return { type, attributes };
}

function errorOf(attributes: Map<number, Buffer>): { errorCode: number; reason: string } {
  const value = attributes.get(ATTR.errorCode);
  if (!value) return { errorCode: 0, reason: 'no ERROR-CODE' };
  return { errorCode: (value[2]! & 0x7) * 100 + value[3]!, reason: value.subarray(4).toString('utf8') };
}

/**
 * Allocates a UDP relay on coturn at `ip:port` with these credentials, then releases it (Refresh with
 * lifetime 0). Whether coturn accepted them, or the error it answered (401 for refused credentials).
 */
export async function turnAllocate(ip: string, port: number, username: string, password: string, timeoutMs = 3000): Promise<AllocateOutcome> {
  const socket = createSocket(ip.includes(':') ? 'udp6' : 'udp4');
  const exchange = (request: Buffer) =>
    new Promise<ReturnType<typeof parse>>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.off('message', onMessage);
        reject(new Error(`no answer from ${ip}:${port} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (answer: Buffer) => {
        if (!answer.subarray(8, 20).equals(request.subarray(8, 20))) return;
        clearTimeout(timer);
        socket.off('message', onMessage);
        resolve(parse(answer));
      };
      socket.on('message', onMessage);
      socket.send(request, port, ip);
    });
  try {
    await new Promise<void>((resolve) => socket.bind(0, resolve));
    const transport = attribute(ATTR.requestedTransport, Buffer.from([17, 0, 0, 0]));
    const challenge = await exchange(message(ALLOCATE_REQUEST, [transport]));
    if (challenge.type !== ALLOCATE_ERROR) throw new Error(`expected a 401 challenge, got message type 0x${challenge.type.toString(16)}`);
    const realm = challenge.attributes.get(ATTR.realm);
    const nonce = challenge.attributes.get(ATTR.nonce);
    if (!realm || !nonce) return { ok: false, ...errorOf(challenge.attributes) };
    const key = createHash('md5').update(`${username}:${realm.toString('utf8')}:${password}`).digest();
    const auth = [attribute(ATTR.username, Buffer.from(username, 'utf8')), attribute(ATTR.realm, realm), attribute(ATTR.nonce, nonce)];
    const answer = await exchange(message(ALLOCATE_REQUEST, [transport, ...auth], key));
    if (answer.type !== ALLOCATE_SUCCESS) return { ok: false, ...errorOf(answer.attributes) };
    const relayed = answer.attributes.get(ATTR.relayedAddress);
    const relayedPort = relayed ? relayed.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16) : 0;
    await exchange(message(REFRESH_REQUEST, [attribute(ATTR.lifetime, Buffer.from([0, 0, 0, 0])), ...auth], key)).catch(() => undefined);
    return { ok: true, relayedPort };
  } finally {
    socket.close();
  }
}
