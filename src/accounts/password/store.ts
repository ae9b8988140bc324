// PUT /password's write: the new hash in place of the verified one, and the end of the user's other
// sessions, in one statement. Knows nothing of HTTP.
import { and, eq, inArray, lte, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { sessions, users } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import { hashPassword, type HashOptions } from '../passwords.js';
import { AuthError } from '../shared/auth-error.js';
import { accountEventRows, sessionsEnded } from '../shared/account-events.js';
import type { Authenticated } from '../types.js';

export interface NewPasswordDeps {
  db: Db;
  now: () => Date;
  logger: Logger;
  /** The user's hashing lane (AuthService.hashing). */
  hashing: HashOptions;
}

/**
 * Stores a new password in place of `verifiedHash` (the one confirmPassword verified) and revokes
 * every other session of the user; the caller's session stays. The swap is conditional on that
 * hash, so of two concurrent changes with the same old password only one succeeds.
 */
export async function storeNewPassword(deps: NewPasswordDeps, auth: Authenticated, verifiedHash: string, newPassword: string): Promise<void> {
  const { db } = deps;
  const userId = auth.user.id;
  const current = { passwordHash: verifiedHash };
  // Hashed outside the transaction: argon2 is slow on purpose and must not hold a connection.
  const passwordHash = await hashPassword(newPassword, deps.hashing);
  const now = deps.now();
  // One statement: the new hash (only if the verified one is still current) and the end of every
  // other session. The number of the last session opened when the change took the user's row
  // bounds the clean-up below.
  const changed = db.$with('changed').as(
    db
      .update(users)
      .set({ passwordHash, updatedAt: now })
      .where(and(eq(users.id, userId), eq(users.passwordHash, current.passwordHash)))
      .returning({ id: users.id }),
  );
  const ended = db.$with('ended').as(
    db
      .delete(sessions)
      .where(and(inArray(sessions.userId, db.select({ id: changed.id }).from(changed)), ne(sessions.id, auth.sessionId)))
      .returning({ userId: sessions.userId, publicId: sessions.publicId }),
  );
  const [row] = await db
    .with(changed, ended, ...accountEventRows(db, now, sessionsEnded(sql`select user_id, public_id from ${ended}`, 'password_changed')))
    .select({
      // Evaluated per row of `changed`, so after the update holds the row lock (not at statement start).
      lastSessionId: sql<string | number | null>`case when ${changed.id} is not null then pg_sequence_last_value(pg_get_serial_sequence('sessions', 'id')::regclass) end`,
      // Read here, so the sessions end in the statement's main part, before the event log's insert
      // takes its commit lock (which it holds to the commit): else that insert would run the delete.
      ended: sql<string | number>`(select count(*) from ${ended})`,
    })
    .from(changed);
  if (!row) throw new AuthError('wrong_old_password');
  // A login that verified the old password and inserted its session while this change waited for
  // the row lock committed after the statement above took its snapshot, so its session escaped the
  // delete. Its id is at most lastSessionId; sessions opened with the new password come after.
  if (row.lastSessionId !== null) {
    const late = db.$with('late').as(
      db
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), ne(sessions.id, auth.sessionId), lte(sessions.id, Number(row.lastSessionId))))
        .returning({ userId: sessions.userId, publicId: sessions.publicId }),
    );
    await db
      .with(late, ...accountEventRows(db, now, sessionsEnded(sql`select user_id, public_id from ${late}`, 'password_changed')))
      .select({ n: sql<number>`count(*)` })
      .from(late)
      .catch((error: unknown) => {
        deps.logger.error({ err: error, userId }, 'password changed, but sessions opened during the change could not be ended');
      });
  }
}

