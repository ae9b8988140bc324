// A secret generated once and kept in a file, for development runs that were given none: restarts
// reuse it, so what it protects (reset codes, later TOTP secrets and tokens) stays valid across them.
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface PersistedSecret {
  value: string;
  /** True when this call generated it (and wrote the file); false when it read an existing one. */
  created: boolean;
  file: string;
}

export interface PersistedSecretOptions {
  /** Makes a new secret; default 32 random bytes, base64url (43 characters). */
  generate?: () => string;
  /** A file holding fewer characters is refused rather than used or overwritten. Default 32. */
  minLength?: number;
}

/**
 * The secret stored in `file`, or a new one written there (mode 0600, its folder created 0700)
 * when the file does not exist. Never logs the value. The file is created whole or not at all: the
 * secret is written to a temporary file first and hard-linked into place, so two processes starting
 * together agree on one secret and a crash never leaves half a secret behind. A file readable by
 * others is made private (0600); one that holds too short a secret is refused, not replaced, since
 * replacing it would silently invalidate what the old secret protects.
 * @example const { value, created } = await persistedSecret(path.join(dataDir, 'auth-key-secret'))
 */
export async function persistedSecret(file: string, options: PersistedSecretOptions = {}): Promise<PersistedSecret> {
  const { generate = () => randomBytes(32).toString('base64url'), minLength = 32 } = options;
  const existing = await readSecret(file, minLength);
  if (existing !== undefined) return { value: existing, created: false, file };

  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = generate();
  if (value.length < minLength || /\s/.test(value)) throw new RangeError(`persistedSecret: a generated secret must be at least ${minLength} characters without whitespace`);
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, `${value}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process created it first: use that one.
    const winner = await readSecret(file, minLength);
    if (winner === undefined) throw error;
    return { value: winner, created: false, file };
  } finally {
    await unlink(temporary).catch(() => {});
  }
  return { value, created: true, file };
}

async function readSecret(file: string, minLength: number): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const value = text.trim();
  if (value.length < minLength) {
    throw new Error(`${file} holds no usable secret (fewer than ${minLength} characters); remove it to have a new one generated, or set the variable`);
  }
  // Private to its owner, whatever created it.
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  return value;
}
