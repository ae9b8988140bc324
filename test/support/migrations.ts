// The committed migrations up to one of them, for the upgrade tests: a database as an earlier
// release left it, then migrated by this one (test/db/*-migration, jwt-upgrade).
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { expect } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { migrationsFolder } from '../../src/db/migrate.js';

/** The committed migrations up to and including `tag`, in a folder of their own. */
export async function migrationsUpTo(tag: string): Promise<{ folder: string; remove: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-'));
  await cp(migrationsFolder, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: Array<{ idx: number; tag: string }> };
  const last = journal.entries.findIndex((e) => e.tag === tag);
  expect(last).toBeGreaterThanOrEqual(0);
  journal.entries = journal.entries.slice(0, last + 1);
  await writeFile(journalFile, JSON.stringify(journal));
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

/** Applies the migrations of `folder` (as migrateDatabase does the committed ones). */
export async function migrateWith(database: Database, folder: string): Promise<void> {
  if (database.kind === 'postgres') await migratePostgres(database.db as unknown as PostgresJsDatabase, { migrationsFolder: folder });
  else await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: folder });
}
