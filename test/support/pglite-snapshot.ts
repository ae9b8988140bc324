// One migrated PGlite data directory for the whole suite: creating a PGlite cluster (initdb inside
// WebAssembly) costs seconds and every in-memory test database used to pay it; loading a dumped one
// costs a fraction. The snapshot is PGlite's documented `dumpDataDir()` tarball, written once to the
// system's temp folder under a name that changes with PGlite's version and the migrations, so a new
// migration or a PGlite upgrade makes a new one (forks racing to write it rename atomically).
// The child servers (test/support/server-process.ts) get the same cluster as a data directory on
// disk: a copy of one template folder made from the snapshot, opened through DATA_DIR as any
// development start opens its database (no test-only code in the server).
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../src/db/client.js';
import { migrateDatabase, migrationsFolder } from '../../src/db/migrate.js';

function snapshotBase(): string {
  const hash = createHash('sha256');
  // The installed PGlite's package.json (its `exports` do not list it, so it is read as a file).
  hash.update(readFileSync(fileURLToPath(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url))));
  for (const folder of [migrationsFolder, join(migrationsFolder, 'meta')]) {
    for (const name of readdirSync(folder).sort()) {
      if (!name.endsWith('.sql') && !name.endsWith('.json')) continue;
      hash.update(name).update(readFileSync(join(folder, name)));
    }
  }
  return join(tmpdir(), `chat-backend-pglite-${hash.digest('hex').slice(0, 16)}`);
}

let snapshot: Promise<Blob> | undefined;

/** The migrated snapshot (made on first use), for `openDatabase(config, { pgliteSnapshot })`. */
export function migratedSnapshot(): Promise<Blob> {
  snapshot ??= load();
  return snapshot;
}

async function load(): Promise<Blob> {
  const path = `${snapshotBase()}.tar`;
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

let template: Promise<string> | undefined;

/** The migrated cluster as a folder (made from the snapshot on first use); never opened itself, only copied. */
function migratedTemplate(): Promise<string> {
  template ??= makeTemplate();
  return template;
}

async function makeTemplate(): Promise<string> {
  const path = `${snapshotBase()}.datadir`;
  if (existsSync(path)) return path;
  const partial = `${path}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  const database = await openDatabase({ kind: 'pglite', dataDir: partial }, { pgliteSnapshot: await migratedSnapshot() });
  await database.close();
  try {
    await rename(partial, path);
  } catch (error) {
    // Another fork renamed its copy first (a non-empty folder is not replaced): that one serves.
    await rm(partial, { recursive: true, force: true });
    if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return path;
}

/**
 * Where the child servers' database folders go: /dev/shm (memory) where there is one. A cluster is
 * about a thousand files and 40 MB; copying it took 0.7-1.2 s onto this disk against 0.15-0.2 s into
 * memory, at every server start, and the server's own writes to it no longer wait on the disk either.
 */
const CHILD_DB_PARENT = (() => {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
})();

/**
 * A new temporary DATA_DIR whose database folder holds a copy of the migrated cluster, for a server
 * started with `DATA_DIR` pointing at it: it opens in a fraction of a second where a new cluster
 * (memory://) costs several (initdb inside WebAssembly). The caller removes the folder.
 */
export async function migratedDataDir(): Promise<string> {
  const dir = await mkdtemp(join(CHILD_DB_PARENT, 'chat-backend-child-db-'));
  await copyMigratedCluster(dir);
  return dir;
}

/**
 * Copies the migrated cluster into the database folder of DATA_DIR `dir` (`dir/pglite`, made if
 * missing), for a server whose DATA_DIR the test owns and removes: `npm start` in a folder of the
 * test's (./.data), or a DATA_DIR shared with the secrets a development start generates.
 */
export async function copyMigratedCluster(dir: string): Promise<void> {
  await copyTree(await migratedTemplate(), join(dir, 'pglite'));
}

/**
 * What fs.cp copies of a cluster (contents and modes; copyFile keeps a file's), 16 files in flight:
 * fs.cp copies one file at a time, and a cluster's thousand small files waited on each other
 * (measured: 0.9-1.1 s against 0.7 s on disk, 0.7 s against 0.15 s in memory).
 */
async function copyTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true, recursive: true });
  // Anything but files and folders (none in a PGlite cluster today): fs.cp knows what to do with it.
  if (entries.some((entry) => !entry.isFile() && !entry.isDirectory())) return cp(from, to, { recursive: true });
  const relative = (entry: (typeof entries)[number]) => join(entry.parentPath, entry.name).slice(from.length);
  // Parents before children (a shorter path cannot be a child of a longer one), each with its mode as fs.cp keeps it (0700).
  const folders = ['', ...entries.filter((entry) => entry.isDirectory()).map(relative).sort((a, b) => a.length - b.length)];
  for (const folder of folders) {
    await mkdir(join(to, folder), { recursive: true });
    await chmod(join(to, folder), (await stat(join(from, folder))).mode & 0o7777);
  }
  const files = entries.filter((entry) => entry.isFile()).map(relative);
  let next = 0;
  const copier = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      await copyFile(join(from, file), join(to, file));
    }
  };
  await Promise.all(Array.from({ length: 16 }, copier));
}
