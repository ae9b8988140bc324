// Issue 27 #3: the real server without INTERNAL_TOKEN outside production generates one into
// ${DATA_DIR}/internal-token (0600), prints it once as a ready-to-paste `export` line, and every
// later start on the same DATA_DIR reuses it, so a token exported in a shell survives a reload.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../support/server-process.js';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}, 60_000);

function exportLines(server: ServerProcess): string[] {
  return server.output().split('\n').filter((line) => line.startsWith('export INTERNAL_TOKEN='));
}

it('generates the token once under DATA_DIR, prints an export line at each start, and reuses it', { timeout: 180_000 }, async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'internal-token-'));
  dirs.push(dataDir);
  const env = { INTERNAL_TOKEN: '', DATA_DIR: dataDir };
  const first = await startServer(env, { timeoutMs: 90_000 });
  servers.push(first);
  const file = path.join(dataDir, 'internal-token');
  const token = (await readFile(file, 'utf8')).trim();
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  expect(exportLines(first)).toEqual([`export INTERNAL_TOKEN=${token}`]);
  expect(first.output()).toContain(`generated one and stored it in ${file}`);
  // Only on the terminal: never in a log line.
  expect(first.logLines().filter((line) => JSON.stringify(line).includes(token))).toEqual([]);
  expect((await fetch(`${first.url}/internal/info`, { headers: { 'X-Internal-Token': token } })).status).toBe(200);
  await first.stop();

  const second = await startServer(env, { timeoutMs: 90_000 });
  servers.push(second);
  expect(exportLines(second)).toEqual([`export INTERNAL_TOKEN=${token}`]);
  expect(second.output()).toContain(`using the one stored in ${file}`);
  expect((await fetch(`${second.url}/internal/info`, { headers: { 'X-Internal-Token': token } })).status).toBe(200);
  await second.stop();
});

it('uses INTERNAL_TOKEN when it is set and prints nothing about it', { timeout: 120_000 }, async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'internal-token-set-'));
  dirs.push(dataDir);
  const server = await startServer({ DATA_DIR: dataDir }, { timeoutMs: 90_000 });
  servers.push(server);
  expect(exportLines(server)).toEqual([]);
  await expect(stat(path.join(dataDir, 'internal-token'))).rejects.toThrow();
  await server.stop();
});
