// AUTH_KEY_SECRET: the service's one server-side secret, never stored in the database. Each use gets
// its own subkey (HKDF-SHA256 with the use as `info`), so one use can never be turned against another.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { AUTH_KEY_SECRET_MIN_LENGTH } from '../config/server.js';
import type { Logger } from '../logger.js';
import { persistedSecret } from './persisted-secret.js';

/**
 * What a subkey is for; its `info` in HKDF (e.g. 'reset-code-digest', 'signing-key-encryption'). Each
 * feature names its purposes beside the code that uses them; a new use takes a new name, never reuses one.
 */
export type AuthKeyPurpose = string;

/** A purpose whose subkey encrypts (AES-256-GCM) rather than digests. */
export type SealPurpose = AuthKeyPurpose;

export { AUTH_KEY_SECRET_MIN_LENGTH };

/** The file under DATA_DIR/secrets holding the secret generated for a development run without AUTH_KEY_SECRET. */
export const GENERATED_AUTH_KEY_FILE = 'auth-key-secret';

/**
 * Subkeys of AUTH_KEY_SECRET: HKDF-SHA256(secret as UTF-8, empty salt, info = purpose, 32 bytes).
 * @example new AuthKeys(secret).digest('reset-code-digest', `${userId}:${code}`)
 */
export class AuthKeys {
  private readonly secret: Buffer;
  private readonly subkeys = new Map<AuthKeyPurpose, Buffer>();

  constructor(secret: string) {
    if (secret.length < AUTH_KEY_SECRET_MIN_LENGTH) throw new RangeError(`AUTH_KEY_SECRET must be at least ${AUTH_KEY_SECRET_MIN_LENGTH} characters`);
    this.secret = Buffer.from(secret, 'utf8');
  }

  subkey(purpose: AuthKeyPurpose): Buffer {
    let key = this.subkeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.secret, Buffer.alloc(0), purpose, 32));
      this.subkeys.set(purpose, key);
    }
    return key;
  }

  /** HMAC-SHA256 of `message` under the purpose's subkey, hex. */
  digest(purpose: AuthKeyPurpose, message: string): string {
    return createHmac('sha256', this.subkey(purpose)).update(message).digest('hex');
  }

  /** Whether `stored` (hex) is the digest of `message`, compared in constant time. */
  matches(purpose: AuthKeyPurpose, message: string, stored: string): boolean {
    const presented = Buffer.from(this.digest(purpose, message), 'hex');
    const expected = Buffer.from(stored, 'hex');
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }

  /**
   * `plaintext` encrypted with AES-256-GCM under the purpose's subkey, bound to `context` (the
   * additional data: what the value belongs to, so a sealed value moved to another row does not open):
   * `v1.<iv>.<ciphertext>.<tag>`, base64url.
   */
  seal(purpose: SealPurpose, plaintext: Buffer, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.subkey(purpose), iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v1', iv, ciphertext, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /**
   * The plaintext of a value sealed for `context`; undefined when it is not in the sealed format, was
   * sealed under another AUTH_KEY_SECRET or for another context, or was altered.
   */
  open(purpose: SealPurpose, sealed: string, context: string): Buffer | undefined {
    const [version, iv, ciphertext, tag] = sealed.split('.');
    if (version !== 'v1' || !iv || !ciphertext || !tag) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.subkey(purpose), Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
    } catch {
      return undefined;
    }
  }
}

/**
 * AUTH_KEY_SECRET as configured, or (outside production, where the configuration requires it) one
 * generated for this service: kept in `${DATA_DIR}/secrets/auth-key-secret` when the database outlives the
 * process, so a restart keeps reset codes valid; only in memory with an in-memory database, whose
 * codes die with the process anyway. Logs where it came from, never the value.
 */
export async function resolveAuthKeySecret(config: Pick<Config, 'authKeySecret' | 'nodeEnv' | 'secretsDir' | 'database'>, logger: Logger): Promise<string> {
  if (config.authKeySecret) return config.authKeySecret;
  if (config.nodeEnv === 'production') throw new Error('AUTH_KEY_SECRET must be set when NODE_ENV=production');
  if (config.database.kind === 'pglite' && config.database.dataDir === undefined) {
    logger.info('AUTH_KEY_SECRET is not set: generated one for this run, kept in memory only (the in-memory database forgets its codes on exit too)');
    return randomBytes(32).toString('base64url');
  }
  const file = path.resolve(config.secretsDir, GENERATED_AUTH_KEY_FILE);
  const secret = await persistedSecret(file, { minLength: AUTH_KEY_SECRET_MIN_LENGTH });
  if (secret.created) logger.warn({ file }, 'AUTH_KEY_SECRET is not set: generated one and stored it in this file (mode 0600), reused on the next start; set AUTH_KEY_SECRET in production');
  else logger.info({ file }, 'AUTH_KEY_SECRET is not set: using the one stored in this file');
  return secret.value;
}
