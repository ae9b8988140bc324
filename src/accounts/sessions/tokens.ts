// Opaque session tokens `<id>.<secret>`: the id finds the row, only sha256(secret) is stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ID_BYTES = 16;
const SECRET_BYTES = 32;
const TOKEN_PATTERN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export interface IssuedToken {
  /** What the client gets: `<id>.<secret>`. */
  token: string;
  id: string;
  /** Hex SHA-256 of the secret; the only part of the secret that is stored. */
  digest: string;
}

/** A fresh token with 256 bits of secret randomness (plus a 128-bit lookup id). */
export function issueToken(): IssuedToken {
  const id = randomBytes(ID_BYTES).toString('base64url');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { token: `${id}.${secret}`, id, digest: digestSecret(secret) };
}

/** Splits a presented token; undefined when it cannot be one of ours. */
export function parseToken(token: string): { id: string; secret: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

export function digestSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time check of a presented secret against a stored hex digest. */
export function secretMatches(secret: string, storedDigest: string): boolean {
  const presented = createHash('sha256').update(secret).digest();
  const stored = Buffer.from(storedDigest, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
