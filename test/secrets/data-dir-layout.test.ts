// DATA_DIR keeps the generated secrets and the embedded database in separate private folders
// (secrets/ and pglite/, 0700, files 0600), so a copy of the database never carries the key that
// opens what it seals. A DATA_DIR of the earlier layout (PGlite's files and the secret files side by
// side in DATA_DIR, PGlite's files 0666) is moved at start, nothing lost: the same secrets, the same
// accounts, the same signing keys (a token issued before still verifies, the password still logs in).
import { chmod, mkdir, readdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { generatedSecret, useDevServers } from '../support/dev-servers.js';
import { copyMigratedCluster } from '../support/pglite-snapshot.js';
import type { ServerProcess } from '../support/server-process.js';

const { dataDir: tempDataDir, start } = useDevServers();

async function call(server: ServerProcess, method: string, route: string, body?: unknown, token?: string): Promise<{ code: number; data?: Record<string, unknown> }> {
  const headers: Record<string, string> = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const res = await fetch(`${server.url}/api/v1/auth${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return (await res.json()) as { code: number; data?: Record<string, unknown> };
}

/** Every folder and file under `dir` with its mode bits, relative to `dir`. */
async function modes(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const entry of await readdir(dir, { recursive: true })) found.set(entry, (await stat(path.join(dir, entry))).mode & 0o777);
  return found;
}

/** Undoes the layout by hand, as the earlier service left DATA_DIR: everything in DATA_DIR itself, PGlite's files 0666. */
async function toEarlierLayout(dataDir: string): Promise<void> {
  for (const folder of ['pglite', 'secrets']) {
    for (const name of await readdir(path.join(dataDir, folder))) await rename(path.join(dataDir, folder, name), path.join(dataDir, name));
    await rmdir(path.join(dataDir, folder));
  }
  for (const entry of (await modes(dataDir)).keys()) {
    if (entry === 'auth-key-secret' || entry === 'internal-token') continue;
    await chmod(path.join(dataDir, entry), (await stat(path.join(dataDir, entry))).isDirectory() ? 0o755 : 0o666);
  }
}

it('keeps secrets and database apart and private, and moves an earlier layout once with nothing lost', { timeout: 240_000 }, async () => {
  const dataDir = await tempDataDir('data-dir-layout-');
  await copyMigratedCluster(dataDir);
  // One issuer for every start (each listens on a port of its own, the default issuer's).
  const env = { AUTH_KEY_SECRET: '', INTERNAL_TOKEN: '', DATABASE_URL: '', DATA_DIR: dataDir, AUTH_ISSUER: 'http://layout.test' };

  const first = await start(env, { timeoutMs: 90_000 });
  const authKey = await generatedSecret(path.join(dataDir, 'secrets', 'auth-key-secret'));
  const internalToken = await generatedSecret(path.join(dataDir, 'secrets', 'internal-token'));
  expect((await readdir(dataDir)).sort()).toEqual(['pglite', 'secrets']);
  const username = `layout_${Date.now()}`;
  const registered = await call(first, 'POST', '/register', { username, email: `${username}@example.com`, password: 'layout-Secret-pw' });
  expect(registered.code).toBe(0);
  const accessToken = registered.data!.token as string;
  expect((await call(first, 'GET', '/profile', undefined, accessToken)).code).toBe(0);
  await first.stop();
  // Both folders and everything in them: the service user's alone.
  for (const folder of ['secrets', 'pglite']) {
    expect((await stat(path.join(dataDir, folder))).mode & 0o777).toBe(0o700);
    for (const [entry, mode] of await modes(path.join(dataDir, folder))) expect({ entry, mode: mode & 0o077 }).toEqual({ entry, mode: 0 });
  }

  await toEarlierLayout(dataDir);
  await mkdir(path.join(dataDir, 'recordings'));
  await writeFile(path.join(dataDir, 'recordings', 'kept.webm'), 'not the database');
  expect(await readdir(dataDir)).toContain('PG_VERSION');
  expect((await stat(path.join(dataDir, 'PG_VERSION'))).mode & 0o777).toBe(0o666);

  const second = await start(env, { timeoutMs: 90_000 });
  expect((await readdir(dataDir)).sort()).toEqual(['pglite', 'recordings', 'secrets']);
  expect(await readFile(path.join(dataDir, 'recordings', 'kept.webm'), 'utf8')).toBe('not the database');
  expect(await generatedSecret(path.join(dataDir, 'secrets', 'auth-key-secret'))).toBe(authKey);
  expect(await generatedSecret(path.join(dataDir, 'secrets', 'internal-token'))).toBe(internalToken);
  expect(second.output()).toContain(`moved the embedded database into ${path.join(dataDir, 'pglite')}`);
  expect(second.output()).not.toContain(authKey);
  // The same signing keys (a token of the first run verifies), the same account, logins sign again.
  expect((await call(second, 'GET', '/profile', undefined, accessToken)).code).toBe(0);
  expect((await call(second, 'POST', '/login', { account: username, password: 'layout-Secret-pw' })).code).toBe(0);
  expect((await fetch(`${second.url}/internal/info`, { headers: { 'x-internal-token': internalToken } })).status).toBe(200);
  for (const folder of ['secrets', 'pglite']) {
    expect((await stat(path.join(dataDir, folder))).mode & 0o777).toBe(0o700);
    for (const [entry, mode] of await modes(path.join(dataDir, folder))) {
      // A folder the running database made since the start is private by the service's umask.
      if ((await stat(path.join(dataDir, folder, entry))).isDirectory()) expect({ entry, mode }).toEqual({ entry, mode: 0o700 });
    }
  }
  await second.stop();
  for (const [entry, mode] of await modes(path.join(dataDir, 'pglite'))) expect({ entry, mode: mode & 0o077 }).toEqual({ entry, mode: 0 });
  // A third start finds the layout as it is and moves nothing.
  const third = await start(env, { timeoutMs: 90_000 });
  expect(third.output()).not.toContain('moved the');
  expect((await call(third, 'POST', '/login', { account: username, password: 'layout-Secret-pw' })).code).toBe(0);
  await third.stop();
});
