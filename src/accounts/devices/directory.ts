// A user's sessions as devices: list them, end one, the others or all. Ending a session deletes its
// row, so its access and refresh tokens stop working at once. Knows nothing of HTTP.
import { and, desc, eq, gt, inArray, ne, notInArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { sessions } from '../../db/schema.js';
import type { AuthMethod } from './contract.js';
import { accountEventRows, sessionsEnded } from '../shared/account-events.js';
import type { SessionEndReason } from '../events.js';
import { AuthError } from '../shared/auth-error.js';
import type { AuditLog } from '../audit/log.js';
import type { Authenticated, SessionClient } from '../types.js';

export interface DeviceSession {
  publicId: string;
  userAgent: string | null;
  ip: string | null;
  createdAt: Date;
  lastUsedAt: Date;
  current: boolean;
  authMethod: AuthMethod;
}

/** Sessions one user keeps at once; opening one more ends the least recently used. */
export const MAX_SESSIONS_PER_USER = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type LogoutScope = 'current' | 'others' | 'all';

export class SessionDirectory {
  constructor(private readonly deps: { db: Db; now: () => Date; audit: AuditLog }) {}

  /** DELETE /sessions/{id}: ends one of the caller's sessions and audits it (`no_such_session` for another's or an unknown one). */
  async endOwn(auth: Authenticated, publicId: string, client: SessionClient): Promise<void> {
    const ended = await this.end(auth.user.id, publicId);
    await this.deps.audit.record({ type: 'session_ended', userId: auth.user.id, sessionId: ended.publicId, detail: 'user', ip: client.ip, userAgent: client.userAgent });
  }

  /** The user's live sessions (refresh token not expired), newest first. */
  async list(userId: number, currentSessionId: number): Promise<DeviceSession[]> {
    const rows = await this.deps.db
      .select({
        id: sessions.id,
        publicId: sessions.publicId,
        userAgent: sessions.userAgent,
        ip: sessions.ip,
        createdAt: sessions.createdAt,
        lastUsedAt: sessions.lastUsedAt,
        authMethod: sessions.authMethod,
      })
      .from(sessions)
      .where(and(eq(sessions.userId, userId), gt(sessions.refreshExpiresAt, this.deps.now())))
      .orderBy(desc(sessions.createdAt), desc(sessions.id))
      .limit(MAX_SESSIONS_PER_USER + 10);
    // auth_method is written only from AuthMethod (AuthService.newSession takes one).
    return rows.map(({ id, authMethod, ...row }) => ({ ...row, authMethod: authMethod as AuthMethod, current: id === currentSessionId }));
  }

  /** A session by its public id (right after login or register). */
  async byPublicId(publicId: string): Promise<{ id: number; publicId: string; userId: number } | undefined> {
    const [row] = await this.deps.db
      .select({ id: sessions.id, publicId: sessions.publicId, userId: sessions.userId })
      .from(sessions)
      .where(eq(sessions.publicId, publicId))
      .limit(1);
    return row;
  }

  /** Ends one of the user's sessions (auth.session.ended revoked); an unknown id and another user's answer alike (`no_such_session`). */
  async end(userId: number, publicId: string): Promise<{ publicId: string; internalId: number }> {
    if (!UUID.test(publicId)) throw new AuthError('no_such_session');
    const [ended] = await this.endWhere(and(eq(sessions.userId, userId), eq(sessions.publicId, publicId))!, 'revoked');
    if (!ended) throw new AuthError('no_such_session');
    return ended;
  }

  /** Logout: the current session, every other one, or all; returns the public ids ended. */
  async endByScope(userId: number, currentSessionId: number, scope: LogoutScope): Promise<string[]> {
    const where =
      scope === 'current'
        ? eq(sessions.id, currentSessionId)
        : scope === 'others'
          ? and(eq(sessions.userId, userId), ne(sessions.id, currentSessionId))
          : eq(sessions.userId, userId);
    const ended = await this.endWhere(where!, 'logout');
    return ended.map((row) => row.publicId);
  }

  /** Deletes the sessions `where` selects, each with its auth.session.ended (`reason`) in the same statement. */
  private endWhere(where: SQL, reason: SessionEndReason): Promise<Array<{ publicId: string; internalId: number }>> {
    const { db, now } = this.deps;
    const ended = db.$with('ended').as(db.delete(sessions).where(where).returning({ userId: sessions.userId, publicId: sessions.publicId, internalId: sessions.id }));
    const events = accountEventRows(db, now(), sessionsEnded(sql`select user_id, public_id from ${ended}`, reason));
    return db.with(ended, ...events).select({ publicId: ended.publicId, internalId: ended.internalId }).from(ended);
  }

  /** The public ids of the user's sessions, except `exceptSessionId` (for the audit of a bulk end). */
  async publicIds(userId: number, exceptSessionId?: number): Promise<string[]> {
    const rows = await this.deps.db
      .select({ publicId: sessions.publicId })
      .from(sessions)
      .where(exceptSessionId === undefined ? eq(sessions.userId, userId) : and(eq(sessions.userId, userId), ne(sessions.id, exceptSessionId)));
    return rows.map((row) => row.publicId);
  }

  /** Of the given ids, those whose sessions no longer exist. */
  async gone(publicIds: string[]): Promise<string[]> {
    if (publicIds.length === 0) return [];
    const alive = new Set(
      (await this.deps.db.select({ publicId: sessions.publicId }).from(sessions).where(inArray(sessions.publicId, publicIds))).map((r) => r.publicId),
    );
    return publicIds.filter((id) => !alive.has(id));
  }

  /**
   * Ends the user's least recently used sessions beyond MAX_SESSIONS_PER_USER, never `openedId`
   * (the session just opened); returns their public ids.
   */
  async trimToCap(userId: number, openedId: number): Promise<string[]> {
    const { db } = this.deps;
    const keep = db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.userId, userId), ne(sessions.id, openedId)))
      .orderBy(desc(sessions.lastUsedAt), desc(sessions.id))
      .limit(MAX_SESSIONS_PER_USER - 1);
    const ended = await this.endWhere(and(eq(sessions.userId, userId), ne(sessions.id, openedId), notInArray(sessions.id, keep))!, 'revoked');
    return ended.map((row) => row.publicId);
  }
}

