// Issue 27 #3: the real server without INTERNAL_TOKEN outside production generates one into
// ${DATA_DIR}/secrets/internal-token (0600), prints it once as a ready-to-paste `export` line, and every
// later start on the same DATA_DIR reuses it, so a token exported in a shell survives a reload.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { generatedSecret, useDevServers } from '../support/dev-servers.js';
import { copyMigratedCluster } from '../support/pglite-snapshot.js';
import type { ServerProcess } from '../support/server-process.js';

const { dataDir: tempDataDir, start } = useDevServers();

function exportLines(server: ServerProcess): string[] {
  return server.output().split('\n').filter((line) => line.startsWith('export INTERNAL_TOKEN='));
}

// The two cases use folders of their own: they run at the same time.
it.concurrent('generates the token once under DATA_DIR, prints an export line at each start, and reuses it', { timeout: 180_000 }, async () => {
  const dataDir = await tempDataDir('internal-token-');
  // The embedded database in DATA_DIR too, as a development start has it: a copy of the migrated cluster (a new one costs seconds of initdb).
  await copyMigratedCluster(dataDir);
  const env = { INTERNAL_TOKEN: '', DATABASE_URL: '', DATA_DIR: dataDir };
  const first = await start(env, { timeoutMs: 90_000 });
  const file = path.join(dataDir, 'secrets', 'internal-token');
  const token = await generatedSecret(file);
  expect(exportLines(first)).toEqual([`export INTERNAL_TOKEN=${token}`]);
  expect(first.output()).toContain(`generated one and stored it in ${file}`);
  // Only on the terminal: never in a log line.
  expect(first.logLines().filter((line) => JSON.stringify(line).includes(token))).toEqual([]);
  expect((await fetch(`${first.url}/internal/info`, { headers: { 'X-Internal-Token': token } })).status).toBe(200);
  await first.stop();

  const second = await start(env, { timeoutMs: 90_000 });
  expect(exportLines(second)).toEqual([`export INTERNAL_TOKEN=${token}`]);
  expect(second.output()).toContain(`using the one stored in ${file}`);
  expect((await fetch(`${second.url}/internal/info`, { headers: { 'X-Internal-Token': token } })).status).toBe(200);
  await second.stop();
});

it.concurrent('uses INTERNAL_TOKEN when it is set and prints nothing about it', { timeout: 120_000 }, async () => {
  const dataDir = await tempDataDir('internal-token-set-');
  await copyMigratedCluster(dataDir);
  const server = await start({ DATABASE_URL: '', DATA_DIR: dataDir }, { timeoutMs: 90_000 });
  expect(exportLines(server)).toEqual([]);
  await expect(stat(path.join(dataDir, 'secrets', 'internal-token'))).rejects.toThrow();
  await server.stop();
});
