// Applies the committed drizzle-kit migrations; idempotent (drizzle records what ran). On PostgreSQL
// under an advisory lock, so that any number of instances may start (and migrate) at once.
import { fileURLToPath } from 'node:url';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Database } from './client.js';

export const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/**
 * The key of the session-level advisory lock the migrations run under (any fixed 64-bit number no
 * other user of the database takes; the bytes of "chatmigr").
 */
export const MIGRATION_LOCK_KEY = 0x636861746d696772n;

/**
 * Brings the database to the committed migrations, under the advisory lock MIGRATION_LOCK_KEY on
 * PostgreSQL: a second instance waits on it, then finds nothing left to apply (without it, two
 * instances on a fresh database both ran `CREATE TABLE` and one failed). PGlite is one process's own
 * database (its folder cannot be opened twice), so it needs none.
 * @example await migrateDatabase(database)
 */
export async function migrateDatabase(database: Database): Promise<void> {
  if (database.kind === 'pglite') {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
    return;
  }
  await database.exclusively(MIGRATION_LOCK_KEY, () => migratePostgres(database.db as unknown as PostgresJsDatabase, { migrationsFolder }));
}
