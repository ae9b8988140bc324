// The database several service processes of one test share, for the tests of instances, restarts and
// crashes: a fresh PostgreSQL database on TEST_DATABASE_URL's server (the `postgres` project), or a
// DATA_DIR holding a copy of the migrated PGlite cluster (one process at a time). Each is removed by
// the cleanup it registers, run by `removeSharedDatabases()` in the file's afterAll.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { usesPostgres } from './app.js';
import { copyMigratedCluster } from './pglite-snapshot.js';

const cleanups: Array<() => Promise<void>> = [];

/** Drops the databases and removes the folders made so far (call it in afterAll). */
export async function removeSharedDatabases(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

/** A new, empty PostgreSQL database on TEST_DATABASE_URL's server, named `<prefix>_<random>`. */
export async function freshPostgres(prefix: string): Promise<string> {
  const admin = process.env.TEST_DATABASE_URL!;
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`create database ${name}`);
  await sql.end();
  cleanups.push(async () => {
    const drop = postgres(admin, { max: 1, onnotice: () => {} });
    await drop.unsafe(`drop database if exists ${name} with (force)`);
    await drop.end();
  });
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The environment that points a service process at the shared database (PostgreSQL, or a PGlite DATA_DIR). */
export async function sharedDatabase(prefix: string): Promise<Record<string, string>> {
  if (usesPostgres()) return { DATABASE_URL: await freshPostgres(prefix) };
  const dir = await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await copyMigratedCluster(dir);
  return { DATABASE_URL: '', DATA_DIR: dir };
}
