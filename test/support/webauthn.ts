// A WebAuthn authenticator and client in software for the server-side passkey tests: ES256 keys made
// here, attestation "none", the authenticator data and signatures as the WebAuthn spec lays them
// out, in the JSON a browser's PublicKeyCredential.toJSON() gives. The real-browser path is
// test/e2e/browser-passkeys.test.ts (Chromium's virtual authenticator).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (bytes: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(bytes));
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

export interface SoftCredential {
  id: Uint8Array;
  privateKey: KeyObject;
  /** The COSE key (EC2, P-256, ES256). */
  cose: Uint8Array;
  userHandle: string;
  counter: number;
}

export interface CeremonyOptions {
  origin: string;
  rpId?: string;
  /** Whether the authenticator says the user was verified (default true). */
  userVerified?: boolean;
}

function authenticatorData(rpId: string, flags: number, counter: number, attested?: Uint8Array): Buffer {
  const head = Buffer.alloc(37);
  sha256(rpId).copy(head, 0);
  head[32] = flags;
  head.writeUInt32BE(counter >>> 0, 33);
  return attested ? Buffer.concat([head, attested]) : head;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** navigator.credentials.create(options) and .toJSON(). `id`: the credential id (default 32 random bytes). */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }, ceremony: CeremonyOptions, id: Uint8Array = new Uint8Array(randomBytes(32))) {
    const rpId = ceremony.rpId ?? options.rp.id ?? 'localhost';
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]),
    );
    const credential: SoftCredential = { id, privateKey, cose, userHandle: options.user.id, counter: 0 };
    this.credentials.push(credential);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, cose]);
    const flags = 0x01 | (ceremony.userVerified === false ? 0 : 0x04) | 0x40;
    const authData = authenticatorData(rpId, flags, 0, attested);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: ceremony.origin, crossOrigin: false }));
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    return {
      id: b64(id),
      rawId: b64(id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64(clientData), attestationObject: b64(attestationObject), transports: ['internal'] },
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get(options) and .toJSON(), with the credential given or the last one. `counter`: what it reports (default: one more). */
  get(options: { challenge: string; rpId?: string }, ceremony: CeremonyOptions, which?: SoftCredential, counter?: number) {
    const credential = which ?? this.credentials.at(-1);
    if (!credential) throw new Error('no credential to sign with');
    const rpId = ceremony.rpId ?? options.rpId ?? 'localhost';
    credential.counter = counter ?? credential.counter + 1;
    const authData = authenticatorData(rpId, 0x01 | (ceremony.userVerified === false ? 0 : 0x04), credential.counter);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: ceremony.origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.privateKey);
    return {
      id: b64(credential.id),
      rawId: b64(credential.id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature), userHandle: credential.userHandle },
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
    };
  }
}
