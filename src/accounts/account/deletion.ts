// Account deletion (DELETE /api/v1/auth/account): the user's row goes, and with it (foreign keys,
// ON DELETE CASCADE) every session, rotated refresh token and reset code. Knows nothing of HTTP.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { authEvents, sessions, users } from '../../db/schema.js';
import { accountMatches } from '../shared/account-name.js';
import { forgottenEventsOf, type AuditLog } from '../audit/log.js';
import { accountEventRows, sessionsEnded, userEvent } from '../shared/account-events.js';
import { AuthError } from '../shared/auth-error.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';
import type { Authenticated, SessionClient } from '../types.js';

export class AccountDeletion {
  constructor(private readonly deps: { db: Db; audit: AuditLog; now: () => Date; confirmation: PasswordConfirmation }) {}

  /** DELETE /account: the caller's password through the one re-check, then the deletion. */
  async deleteConfirmed(auth: Authenticated, password: string, client: SessionClient): Promise<void> {
    const { user } = auth;
    const verifiedHash = await this.deps.confirmation.confirm(user, password, client, 'password', { type: 'account_deletion_failed', detail: 'wrong_password' });
    await this.delete(user.id, verifiedHash);
  }

  /**
   * Deletes the user whose password `verifiedHash` is (as PasswordConfirmation verified it; AuthError
   * `wrong_old_password` when it changed since): username and e-mail are free again at once, every
   * token of the user dies. The audit trail keeps the user id, event types and times; its personal
   * fields for this user are erased. Its events (auth.session.ended account_deleted for each
   * session, then auth.user.deleted) are written by the same statement.
   */
  async delete(userId: number, verifiedHash: string): Promise<void> {
    const { db, audit } = this.deps;
    const [found] = await db.select({ username: users.username, email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
    if (!found) throw new AuthError('invalid_access_token');
    const user = { ...found, passwordHash: verifiedHash };
    // One statement, so the user and the personal fields of its audit rows go together or not at all;
    // conditional on the verified hash: a password change that committed meanwhile wins.
    const gone = db.$with('gone').as(
      db
        .delete(users)
        .where(and(eq(users.id, userId), eq(users.passwordHash, user.passwordHash)))
        .returning({ id: users.id }),
    );
    // Data-modifying CTEs run whether or not the select reads them.
    const erased = db.$with('erased').as(
      db
        .update(authEvents)
        .set({ account: null, ip: null, userAgent: null })
        .where(and(sql`exists (select 1 from gone)`, forgottenEventsOf(userId, user.username, user.email)))
        .returning({ id: authEvents.id }),
    );
    // The sessions the deletion's cascade removes, as the statement's snapshot holds them (a login
    // racing it waits for the user's row and then fails its foreign key).
    const ended = db.$with('ended').as(
      db
        .select({ userId: sessions.userId, publicId: sessions.publicId })
        .from(sessions)
        .where(sql`${sessions.userId} in (select id from gone)`),
    );
    const events = accountEventRows(
      db,
      this.deps.now(),
      sessionsEnded(sql`select user_id, public_id from ${ended}`, 'account_deleted'),
      userEvent('auth.user.deleted', sql`select id as user_id from ${gone}`),
    );
    const [deleted] = await db
      .with(gone, erased, ended, ...events)
      // `erased` is read here so that it runs in the main part, before the event log's commit lock.
      .select({ id: gone.id, sessions: sql<string | null>`(select string_agg(public_id::text, ',') from ended)`, erased: sql<number>`(select count(*) from erased)` })
      .from(gone);
    if (!deleted) throw new AuthError('wrong_old_password', 'password is wrong');
    const endedIds = deleted.sessions ? deleted.sessions.split(',') : [];
    await audit.record(
      ...endedIds.map((sessionId) => ({ type: 'session_ended' as const, userId, sessionId, detail: 'account_deletion' })),
      { type: 'account_deleted', userId },
    );
  }
}

/** The id of the user an account (username or e-mail, as login reads it) names, for the audit of a failed login. */
export async function userIdOfAccount(db: Db, account: string): Promise<number | undefined> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(accountMatches(account))
    .limit(1);
  return row?.id;
}
