// The upgrade to signed access tokens on a database written by the previous release: its sessions
// (opaque `<id>.<secret>` access tokens, only digests stored) keep working after the migration until
// their access token expires, and their refresh tokens return JWTs. Both databases.
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { expect, it } from 'vitest';
import { issueToken } from '../../src/accounts/sessions/tokens.js';
import { compose } from '../../src/compose.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { createLogger } from '../../src/logger.js';
import { migrateWith, migrationsUpTo } from '../support/migrations.js';
import { openTestDatabase, testConfig, TEST_INTERNAL_TOKEN } from '../support/app.js';

/** The last migration of the release before signed access tokens. */
const PREVIOUS_RELEASE = '0003_smiling_midnight';

it('sessions of the previous release keep working after the migration; their refresh returns a JWT', async () => {
  const { database, drop } = await openTestDatabase({ migrate: false });
  const before = await migrationsUpTo(PREVIOUS_RELEASE);
  try {
    await migrateWith(database, before.folder);
    const access = issueToken();
    const refresh = issueToken();
    // As the previous release wrote them (its columns, its token format).
    await database.db.execute(sql`insert into users (username, email, password_hash, nickname) values ('before_jwt', 'before@example.com', 'x', 'before')`);
    await database.db.execute(sql`
      insert into sessions (user_id, access_id, access_hash, access_expires_at, refresh_id, refresh_hash, refresh_expires_at)
      select id, ${access.id}, ${access.digest}, now() + interval '1 hour', ${refresh.id}, ${refresh.digest}, now() + interval '30 days' from users`);

    await migrateDatabase(database);

    const config = testConfig({ ACCESS_TOKEN_TTL: '600' });
    const composition = await compose(config, { logger: createLogger({ level: 'silent' }), database, internalToken: TEST_INTERNAL_TOKEN, areas: { relay: false } });
    try {
      const app = composition.app();
      const profile = (token: string) => app.request('/api/v1/auth/profile', { headers: { authorization: `Bearer ${token}` } });
      const res = await profile(access.token);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { username: string } }).data.username).toBe('before_jwt');

      const refreshed = await app.request('/api/v1/auth/refresh-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: refresh.token }) });
      expect(refreshed.status).toBe(200);
      const tokens = ((await refreshed.json()) as { data: { token: string; refresh_token: string } }).data;
      expect(decodeJwt(tokens.token)).toMatchObject({ sub: expect.stringMatching(/^\d+$/), aud: 'chat-backend' });
      expect((await profile(tokens.token)).status).toBe(200);
      // The refresh replaced the opaque access token, as any refresh replaces its pair.
      expect((await profile(access.token)).status).toBe(401);
    } finally {
      composition.release();
      await composition.stop({ deadlineMs: 10_000 });
    }
  } finally {
    await before.remove();
    await drop();
  }
}, 60_000);
