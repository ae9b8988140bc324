// Real servers started as a developer starts them, each on a DATA_DIR of its own, for the tests of
// what a development start generates there (the internal token, the auth key secret).
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { startServer, type ServerProcess } from './server-process.js';

/**
 * Temporary DATA_DIRs and servers for the tests of one file: after them the servers stop and the
 * folders go.
 * @example const { dataDir, start } = useDevServers(); const server = await start({ DATA_DIR: await dataDir('token-') })
 */
export function useDevServers() {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 60_000);
  return {
    dataDir: async (prefix: string): Promise<string> => {
      const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    start: async (...args: Parameters<typeof startServer>): Promise<ServerProcess> => {
      const server = await startServer(...args);
      servers.push(server);
      return server;
    },
  };
}

/** The secret a start generated into `file`: 32 random bytes in base64url, readable by its owner only. */
export async function generatedSecret(file: string): Promise<string> {
  const secret = (await readFile(file, 'utf8')).trim();
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  return secret;
}
