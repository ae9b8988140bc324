// One migrated PGlite data directory for the whole suite: creating a PGlite cluster (initdb inside
// WebAssembly) costs seconds and every in-memory test database used to pay it; loading a dumped one
// costs a fraction. The snapshot is PGlite's documented `dumpDataDir()` tarball, written once to the
// system's temp folder under a name that changes with PGlite's version and the migrations, so a new
// migration or a PGlite upgrade makes a new one (forks racing to write it rename atomically).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../src/db/client.js';
import { migrateDatabase, migrationsFolder } from '../../src/db/migrate.js';

function snapshotPath(): string {
  const hash = createHash('sha256');
  // The installed PGlite's package.json (its `exports` do not list it, so it is read as a file).
  hash.update(readFileSync(fileURLToPath(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url))));
  for (const folder of [migrationsFolder, join(migrationsFolder, 'meta')]) {
    for (const name of readdirSync(folder).sort()) {
      if (!name.endsWith('.sql') && !name.endsWith('.json')) continue;
      hash.update(name).update(readFileSync(join(folder, name)));
    }
  }
  return join(tmpdir(), `chat-backend-pglite-${hash.digest('hex').slice(0, 16)}.tar`);
}

let snapshot: Promise<Blob> | undefined;

/** The migrated snapshot (made on first use), for `openDatabase(config, { pgliteSnapshot })`. */
export function migratedSnapshot(): Promise<Blob> {
  snapshot ??= load();
  return snapshot;
}

async function load(): Promise<Blob> {
  const path = snapshotPath();
  try {
    return new Blob([await readFile(path)]);
  } catch {
    // Not made yet: make it.
  }
  const database = await openDatabase({ kind: 'pglite', dataDir: undefined });
  try {
    await migrateDatabase(database);
    const client = (database.db as unknown as { $client: PGlite }).$client;
    const tarball = new Uint8Array(await (await client.dumpDataDir('none')).arrayBuffer());
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, tarball);
    await rename(partial, path);
    return new Blob([tarball]);
  } finally {
    await database.close();
  }
}
