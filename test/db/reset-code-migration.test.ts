// The migration of issue 32 #5 on a database that holds reset codes of the old scheme (salted SHA-256):
// they are retired (they can no longer be verified; a code lives 15 minutes) and still count towards
// the hourly cap; the salt column goes. Both databases.
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { migrateDatabase } from '../../src/db/migrate.js';
import { migrateWith, migrationsUpTo } from '../support/migrations.js';
import { openTestDatabase } from '../support/app.js';

const BEFORE = '0001_blue_dark_beast';

function rowsOf(result: unknown): Array<Record<string, unknown>> {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<Record<string, unknown>>;
}

it('retires outstanding codes of the old scheme and drops their salt column', async () => {
  const { database, drop } = await openTestDatabase({ migrate: false });
  const before = await migrationsUpTo(BEFORE);
  try {
    await migrateWith(database, before.folder);
    const { db } = database;
    await db.execute(sql`insert into users (username, email, password_hash, nickname) values ('old_scheme', 'old@example.com', 'x', 'old')`);
    await db.execute(sql`
      insert into password_reset_codes (user_id, code_salt, code_hash, created_at, expires_at, used_at)
      select id, 'salt', repeat('a', 64), now(), now() + interval '15 minutes', null from users
      union all
      select id, 'salt', repeat('b', 64), now() - interval '20 minutes', now() - interval '5 minutes', now() - interval '10 minutes' from users`);

    await migrateDatabase(database);

    const codes = rowsOf(await db.execute(sql`select row_to_json(c)::text as row from password_reset_codes c order by id`)).map((r) => JSON.parse(String(r.row)) as Record<string, unknown>);
    expect(codes).toHaveLength(2);
    for (const code of codes) {
      expect(code.used_at, 'a code of the old scheme is still usable').not.toBeNull();
      expect(Object.keys(code)).not.toContain('code_salt');
    }
  } finally {
    await before.remove();
    await database.close();
    await drop();
  }
});
