// startup: process start (spawn of `node --import tsx src/server.ts`) to the first 200 from /readyz,
// on a fresh PGlite data directory and on a fresh PostgreSQL database (migrations included in both).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bench, info, median, postgresReachable, scratchPostgresDatabase, startServer } from './lib.js';

const RUNS = 3;

export async function startup(): Promise<void> {
  console.log(`startup: spawn to /readyz 200, default worker count, median of ${RUNS}`);
  const pglite: number[] = [];
  const pgliteWarm: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-pglite-'));
    try {
      // First start creates the cluster (initdb) and migrates; the second finds both done.
      for (const list of [pglite, pgliteWarm]) {
        const server = await startServer({ DATABASE_URL: '', DATA_DIR: dir });
        list.push(server.readyMs);
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  info(`PGlite, fresh data dir: ${pglite.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  info(`PGlite, existing data dir: ${pgliteWarm.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  bench('startup-pglite-fresh-ready-ms', median(pglite), 'ms');
  bench('startup-pglite-ready-ms', median(pgliteWarm), 'ms');

  if (!(await postgresReachable())) throw new Error('PostgreSQL at BENCH_DATABASE_URL is not reachable');
  const pg: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const db = await scratchPostgresDatabase('bench_startup');
    try {
      const server = await startServer({ DATABASE_URL: db.url });
      pg.push(server.readyMs);
      await server.stop();
    } finally {
      await db.drop();
    }
  }
  info(`PostgreSQL (fresh database): ${pg.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  bench('startup-postgres-ready-ms', median(pg), 'ms');
  bench('startup-ready-ms', median(pg), 'ms');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await startup();
}
