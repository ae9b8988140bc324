// The Ed25519 keys that sign access tokens: generated on first start, kept in the database (private
// half encrypted under a subkey of AUTH_KEY_SECRET), shared by every instance and rotated on a
// schedule every instance computes alike from the stored rows. Requests read the keys from memory;
// the database is read only when the schedule says something changes, or at most once a minute.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { asc, eq, isNull, and, lte } from 'drizzle-orm';
import { calculateJwkThumbprint, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../../db/client.js';
import { signingKeys } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { AuthKeys } from '../../secrets/auth-key.js';

export const SIGNING_ALGORITHM = 'EdDSA';

/** The keys are read again at least this often (another instance may have added one). */
const RELOAD_INTERVAL_MS = 60_000;
/** A token naming a kid this instance does not know reloads the keys at most this often. */
const UNKNOWN_KID_RELOAD_MS = 5_000;
/** Longest JWKS caching a verifier is told to do, whatever the lead time. */
const MAX_JWKS_MAX_AGE_S = 300;

/** A stored signing key does not open under this instance's AUTH_KEY_SECRET. */
export class SigningKeySecretError extends Error {
  constructor(readonly kid: string) {
    super(
      `AUTH_KEY_SECRET differs from the one the stored signing key ${kid} was sealed under: give every instance on this database the same AUTH_KEY_SECRET (or, to start over, delete the signing_keys rows: every access token then ends)`,
    );
    this.name = 'SigningKeySecretError';
  }
}

export interface PublicJwk extends JWK {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: typeof SIGNING_ALGORITHM;
  use: 'sig';
}

export interface SigningKeyRow {
  kid: string;
  generation: number;
  publishAt: Date;
  signFrom: Date;
  retireAt: Date | null;
}

interface LoadedKey extends SigningKeyRow {
  jwk: PublicJwk;
  /** Imported once per key (jose's importJWK), for every verification. */
  verifyKey: CryptoKey;
  /** The stored, encrypted private key; decrypted when the key first signs. */
  sealed: string;
}

export interface SigningKeysDeps {
  db: Db;
  keys: AuthKeys;
  now: () => Date;
  logger: Logger;
  /** Seconds: the lead of a new key (published this long before it signs) and the tail of an old one. */
  accessTokenTtl: number;
  rotationDays: number;
}

/**
 * @example
 * const ring = new SigningKeys({ db, keys: authKeys, now, logger, accessTokenTtl: 7200, rotationDays: 30 })
 * const { kid, privateKey } = await ring.signer()
 * const key = await ring.verificationKey(header.kid)
 */
export class SigningKeys {
  private loaded = new Map<string, LoadedKey>();
  private privateKeys = new Map<string, KeyObject>();
  private nextCheckMs = Number.NEGATIVE_INFINITY;
  private lastUnknownReloadMs = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(private readonly deps: SigningKeysDeps) {}

  /** How long a verifier may cache the JWKS: below the lead time of a new key, so it sees the key before its tokens. */
  get jwksMaxAgeS(): number {
    return Math.max(0, Math.min(MAX_JWKS_MAX_AGE_S, Math.floor(this.deps.accessTokenTtl / 2)));
  }

  private get leadMs(): number {
    return this.deps.accessTokenTtl * 1000;
  }

  private get periodMs(): number {
    return this.deps.rotationDays * 86_400_000;
  }

  /** Brings the keys up to date now (first start, rotation, retirement), whatever the schedule. */
  refresh(): Promise<void> {
    this.loading ??= this.maintain().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /**
   * Brings the keys up to date and opens every stored private key once. Throws SigningKeySecretError
   * (naming AUTH_KEY_SECRET, never key material) when one does not open: this instance was given
   * another AUTH_KEY_SECRET than the one that sealed them, and would answer 500 to every login. The
   * server refuses to start on it.
   * @example await ring.checkSecret()
   */
  async checkSecret(): Promise<void> {
    await this.refresh();
    for (const key of this.loaded.values()) {
      if (!this.privateKeys.has(key.kid)) this.privateKeys.set(key.kid, this.unseal(key.kid, key.sealed));
    }
  }

  /** The key that signs now, with its kid. */
  async signer(): Promise<{ kid: string; privateKey: KeyObject }> {
    await this.fresh();
    const nowMs = this.deps.now().getTime();
    const keys = [...this.loaded.values()].sort((a, b) => a.signFrom.getTime() - b.signFrom.getTime());
    // The newest key whose time to sign has come; the oldest if the clock went back before all of them.
    const current = keys.filter((k) => k.signFrom.getTime() <= nowMs).at(-1) ?? keys[0];
    if (!current) throw new Error('no signing key');
    let privateKey = this.privateKeys.get(current.kid);
    if (!privateKey) {
      privateKey = this.unseal(current.kid, current.sealed);
      this.privateKeys.set(current.kid, privateKey);
    }
    return { kid: current.kid, privateKey };
  }

  /** The public key of a published kid, for verification; undefined for any other kid. */
  async verificationKey(kid: unknown): Promise<CryptoKey | undefined> {
    if (typeof kid !== 'string' || kid.length === 0 || kid.length > 64) return undefined;
    await this.fresh();
    let key = this.loaded.get(kid);
    const nowMs = this.deps.now().getTime();
    if (!key && nowMs - this.lastUnknownReloadMs >= UNKNOWN_KID_RELOAD_MS) {
      // Perhaps another instance made it since the last read: read again, but never more than every few seconds.
      this.lastUnknownReloadMs = nowMs;
      await this.refresh();
      key = this.loaded.get(kid);
    }
    return key && this.published(key, nowMs) ? key.verifyKey : undefined;
  }

  /** The JWKS: every published key, oldest first. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    await this.fresh();
    const nowMs = this.deps.now().getTime();
    return {
      keys: [...this.loaded.values()]
        .filter((k) => this.published(k, nowMs))
        .sort((a, b) => a.generation - b.generation)
        .map((k) => k.jwk),
    };
  }

  /** The stored schedule, for tests and operators. */
  rows(): SigningKeyRow[] {
    return [...this.loaded.values()]
      .sort((a, b) => a.generation - b.generation)
      .map(({ kid, generation, publishAt, signFrom, retireAt }) => ({ kid, generation, publishAt, signFrom, retireAt }));
  }

  private published(key: SigningKeyRow, nowMs: number): boolean {
    return key.publishAt.getTime() <= nowMs && (key.retireAt === null || key.retireAt.getTime() > nowMs);
  }

  private async fresh(): Promise<void> {
    if (this.deps.now().getTime() >= this.nextCheckMs || this.loaded.size === 0) await this.refresh();
  }

  /**
   * Reads the keys, makes the first one or the next one when it is time, records when an old key
   * retires and deletes retired ones. Every step is one statement that two instances may run at
   * once: the unique generation lets one insert win, the updates are idempotent.
   */
  private async maintain(): Promise<void> {
    const { db } = this.deps;
    const now = this.deps.now();
    let rows = await this.read();
    if (rows.length === 0) {
      // The first key signs at once: no token exists yet that a verifier could miss it for.
      await this.create(0, now, now, now);
      rows = await this.read();
    }
    const newest = rows.at(-1)!;
    if (newest.signFrom.getTime() <= now.getTime() && now.getTime() >= newest.signFrom.getTime() + this.periodMs - this.leadMs) {
      const signFrom = new Date(Math.max(now.getTime() + this.leadMs, newest.signFrom.getTime() + this.periodMs));
      await this.create(newest.generation + 1, now, now, signFrom);
      rows = await this.read();
    }
    // A key with a successor retires once the last token it can have signed has expired.
    for (let i = 0; i + 1 < rows.length; i++) {
      const key = rows[i]!;
      const next = rows[i + 1]!;
      if (key.retireAt === null && next.generation === key.generation + 1) {
        const retireAt = new Date(next.signFrom.getTime() + this.leadMs);
        await db.update(signingKeys).set({ retireAt }).where(and(eq(signingKeys.kid, key.kid), isNull(signingKeys.retireAt)));
        key.retireAt = retireAt;
      }
    }
    const retired = rows.filter((k) => k.retireAt !== null && k.retireAt.getTime() <= now.getTime());
    if (retired.length > 0) {
      await db.delete(signingKeys).where(lte(signingKeys.retireAt, now));
      rows = rows.filter((k) => !retired.includes(k));
    }

    const loaded = new Map<string, LoadedKey>();
    for (const row of rows) {
      const previous = this.loaded.get(row.kid);
      const jwk = previous?.jwk ?? (JSON.parse(row.publicJwk) as PublicJwk);
      const verifyKey = previous?.verifyKey ?? (await this.importPublic(jwk));
      loaded.set(row.kid, { kid: row.kid, generation: row.generation, publishAt: row.publishAt, signFrom: row.signFrom, retireAt: row.retireAt, jwk, verifyKey, sealed: row.privateKey });
    }
    for (const kid of this.privateKeys.keys()) if (!loaded.has(kid)) this.privateKeys.delete(kid);
    this.loaded = loaded;

    // The next moment something changes: a key starts to sign or retires, or the next one is due.
    const nowMs = now.getTime();
    const last = rows.at(-1)!;
    const moments = [nowMs + RELOAD_INTERVAL_MS, last.signFrom.getTime() + this.periodMs - this.leadMs];
    for (const row of rows) moments.push(row.publishAt.getTime(), row.signFrom.getTime(), row.retireAt?.getTime() ?? Number.POSITIVE_INFINITY);
    this.nextCheckMs = Math.min(...moments.filter((ms) => ms > nowMs));
  }

  private async importPublic(jwk: PublicJwk): Promise<CryptoKey> {
    const key: CryptoKey | Uint8Array = await importJWK(jwk, SIGNING_ALGORITHM);
    if (key instanceof Uint8Array) throw new Error(`signing key ${jwk.kid}: not an asymmetric key`);
    return key;
  }

  private read() {
    return this.deps.db.select().from(signingKeys).orderBy(asc(signingKeys.generation));
  }

  private async create(generation: number, createdAt: Date, publishAt: Date, signFrom: Date): Promise<void> {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const { crv, x } = publicKey.export({ format: 'jwk' });
    const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: crv!, x: x! });
    const jwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: x!, kid, alg: SIGNING_ALGORITHM, use: 'sig' };
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    const inserted = await this.deps.db
      .insert(signingKeys)
      .values({ kid, generation, publicJwk: JSON.stringify(jwk), privateKey: this.seal(kid, der), createdAt, publishAt, signFrom })
      .onConflictDoNothing()
      .returning({ kid: signingKeys.kid });
    if (inserted.length > 0) this.deps.logger.info({ kid, generation, signFrom }, 'signing key created');
  }

  /** AES-256-GCM under the AUTH_KEY_SECRET subkey, the kid as additional data (a row's key cannot be moved to another row). */
  private seal(kid: string, der: Buffer): string {
    return this.deps.keys.seal('signing-key-encryption', der, kid);
  }

  private unseal(kid: string, sealed: string): KeyObject {
    if (!/^v1\.[^.]+\.[^.]+\.[^.]+$/.test(sealed)) throw new Error(`signing key ${kid}: unknown storage format`);
    const der = this.deps.keys.open('signing-key-encryption', sealed, kid);
    // Never the key material: only that AUTH_KEY_SECRET is not the one the key was stored under.
    if (!der) throw new SigningKeySecretError(kid);
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  }
}
