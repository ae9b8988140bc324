// AUTH_KEY_SECRET (issue 32 #5): subkeys by HKDF-SHA256, and the secret a development run generates
// for itself: a file under DATA_DIR, mode 0600, reused on the next start, never logged.
import { createHmac, hkdfSync } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { AuthKeys, resolveAuthKeySecret } from '../../src/secrets/auth-key.js';
import { persistedSecret } from '../../src/secrets/persisted-secret.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'auth-key-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}

describe('AuthKeys', () => {
  it('derives one subkey per purpose with HKDF-SHA256 and digests with HMAC-SHA256 under it', () => {
    const secret = 's'.repeat(40);
    const keys = new AuthKeys(secret);
    const expected = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'reset-code-digest', 32));
    expect(keys.subkey('reset-code-digest').equals(expected)).toBe(true);
    // The subkey is not the secret, and another secret gives another digest.
    expect(keys.subkey('reset-code-digest').equals(Buffer.from(secret))).toBe(false);
    const digest = keys.digest('reset-code-digest', '7:123456');
    expect(digest).toBe(createHmac('sha256', expected).update('7:123456').digest('hex'));
    expect(new AuthKeys('t'.repeat(40)).digest('reset-code-digest', '7:123456')).not.toBe(digest);
    expect(keys.matches('reset-code-digest', '7:123456', digest)).toBe(true);
    expect(keys.matches('reset-code-digest', '7:123457', digest)).toBe(false);
    expect(keys.matches('reset-code-digest', '7:123456', 'abcd')).toBe(false);
    expect(() => new AuthKeys('short')).toThrow(RangeError);
  });
});

describe('persistedSecret', () => {
  it('generates a secret into a new file with mode 0600, and reads the same one back next time', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'nested', 'auth-key-secret');
    const first = await persistedSecret(file);
    expect(first.created).toBe(true);
    expect(first.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.value);
    const second = await persistedSecret(file);
    expect(second).toEqual({ value: first.value, created: false, file });
    // No temporary file left behind.
    expect(await readdir(path.dirname(file))).toEqual(['auth-key-secret']);
  });

  it('agrees on one secret when several start at once', async () => {
    const file = path.join(await tempDir(), 'auth-key-secret');
    const all = await Promise.all(Array.from({ length: 8 }, () => persistedSecret(file)));
    expect(new Set(all.map((s) => s.value)).size).toBe(1);
    expect(all.filter((s) => s.created)).toHaveLength(1);
  });

  it('makes a file readable by others private, and refuses one holding too short a secret instead of replacing it', async () => {
    const dir = await tempDir();
    const loose = path.join(dir, 'loose');
    await writeFile(loose, `${'a'.repeat(40)}\n`);
    await chmod(loose, 0o644);
    expect((await persistedSecret(loose)).value).toBe('a'.repeat(40));
    expect((await stat(loose)).mode & 0o777).toBe(0o600);
    const short = path.join(dir, 'short');
    await writeFile(short, 'tiny\n', { mode: 0o600 });
    await expect(persistedSecret(short)).rejects.toThrow(/no usable secret/);
    expect(await readFile(short, 'utf8')).toBe('tiny\n');
  });
});

describe('resolveAuthKeySecret', () => {
  it('uses AUTH_KEY_SECRET when set, and writes nothing', async () => {
    const dir = await tempDir();
    const { logger, lines } = capturingLogger();
    const config = loadConfig({ AUTH_KEY_SECRET: 'c'.repeat(32), DATA_DIR: dir });
    expect(await resolveAuthKeySecret(config, logger)).toBe('c'.repeat(32));
    expect(await readdir(dir)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('outside production without it: generates one under DATA_DIR/secrets once, reuses it on the next start, logs where but never the value', async () => {
    const dir = await tempDir();
    const config = loadConfig({ DATA_DIR: dir });
    const first = capturingLogger();
    const secret = await resolveAuthKeySecret(config, first.logger);
    const file = path.join(dir, 'secrets', 'auth-key-secret');
    expect((await readFile(file, 'utf8')).trim()).toBe(secret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(first.lines).toHaveLength(1);
    expect(JSON.parse(first.lines[0]!)).toMatchObject({ level: 40, file, msg: expect.stringMatching(/generated/) });
    const again = capturingLogger();
    expect(await resolveAuthKeySecret(config, again.logger)).toBe(secret);
    expect(again.lines).toHaveLength(1);
    expect(JSON.parse(again.lines[0]!)).toMatchObject({ level: 30, file, msg: expect.stringMatching(/using the one stored/) });
    for (const line of [...first.lines, ...again.lines]) expect(line).not.toContain(secret);
  });

  it('with an in-memory database keeps the generated secret in memory only', async () => {
    const dir = await tempDir();
    const { logger, lines } = capturingLogger();
    const config = loadConfig({ DATA_DIR: dir, DATABASE_URL: 'memory://' });
    const secret = await resolveAuthKeySecret(config, logger);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(await readdir(dir)).toEqual([]);
    expect(lines.join('')).not.toContain(secret);
  });
});
