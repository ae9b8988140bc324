// The embedded database's memory bound (src/db/client.ts): PostgreSQL's 128 MB of shared buffers
// would all be resident inside PGlite's WebAssembly memory; the service starts it with 16 MB.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';

describe('embedded PGlite', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: undefined });
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('runs with 16 MB of shared buffers and PGlite’s own start parameters kept', async () => {
    const setting: unknown = await database.db.execute(sql`select setting, unit from pg_settings where name = 'shared_buffers'`);
    expect((setting as { rows: Array<{ setting: string; unit: string }> }).rows[0]).toEqual({ setting: '2048', unit: '8kB' });
    // PostgreSQL's own default would be '"$user", public': PGlite's defaults are still passed.
    const searchPath: unknown = await database.db.execute(sql`show search_path`);
    expect((searchPath as { rows: Array<{ search_path: string }> }).rows[0]?.search_path).toBe('public');
  });
});
