// Applies the committed drizzle-kit migrations; idempotent (drizzle records what ran).
import { fileURLToPath } from 'node:url';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Database } from './client.js';

export const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

export async function migrateDatabase(database: Database): Promise<void> {
  if (database.kind === 'postgres') {
    await migratePostgres(database.db as unknown as PostgresJsDatabase, { migrationsFolder });
  } else {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
  }
}
