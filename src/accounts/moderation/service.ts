// Operators' side of the accounts: look users up, ban one (every session ends at once) and lift the
// ban. Reached through /internal with the internal token. Knows nothing of HTTP.
import { and, asc, count, eq, gt, like, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { oidcIdentities, sessions, users } from '../../db/schema.js';
import type { NoticeThrottle } from '../../mail/notice-throttle.js';
import { formatTime } from '../../time.js';
import type { AuditLog } from '../audit/log.js';
import { accountEventRows, sessionsEnded, userEvent } from '../shared/account-events.js';
import { removalDetail, secondFactorRemovals, type FactorRemoval } from '../shared/second-factors.js';
import type { User } from '../types.js';
import { SECOND_FACTORS, secondFactorsSaid } from '../vocabulary.js';

export interface UserSummary {
  user: User;
  /** Live sessions (refresh token not expired). */
  sessions: number;
  /** Its identities at sign-in providers, oldest first. */
  identities: { provider: string; email: string | null; linkedAt: Date; lastUsedAt: Date | null }[];
}

export interface UserQuery {
  /** Username or e-mail prefix, case-insensitive; every user when absent. */
  prefix?: string | undefined;
  /** Users with an id above this (the cursor of the previous page). */
  afterId?: number | undefined;
  limit: number;
}

/** The owner's notice of an operator's clearing (kind `mfa_cleared`, in the factor notices' window). */
export const MFA_CLEARED_NOTICE = {
  subject: `Your ${secondFactorsSaid('named', ' and ', 'lastFirst')} were removed`,
  happened: `An operator removed ${secondFactorsSaid('every', ' and ', 'lastFirst')} of your chat account`,
  advice: `Sign in with your password and add your own ${secondFactorsSaid('named', ' or ')} again. If you did not ask for this, contact support now.`,
};

/** auth.user.mfa_cleared's fields of each factor, as SQL over the removal's counts (clearedFactorValues' `event`, in the statement). */
function clearedEventFields(counts: Readonly<Record<string, SQL>>): Record<string, SQL> {
  return Object.fromEntries(
    SECOND_FACTORS.flatMap((factor) => {
      const removed = counts[factor.name] ?? sql`0`;
      return Object.keys(factor.cleared.event).map((field) => [field, factor.cleared.eventOf === 'count' ? removed : sql`(${removed} > 0)`]);
    }),
  );
}

/** `%`, `_` and `\` are literal in a prefix an operator types. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export class Moderation {
  constructor(
    private readonly deps: {
      db: Db;
      audit: AuditLog;
      now: () => Date;
      /** The second factors an operator's clearing removes. */
      factors: readonly FactorRemoval[];
      /** The owner's notices of factor events (kind `mfa_cleared`); none without mail. */
      notices?: NoticeThrottle | undefined;
    },
  ) {}

  /**
   * Removes every second factor of the user (each factor removing its rows) in one statement, for an
   * operator who verified the person by other means. Audited (`mfa_cleared`), its
   * `auth.user.mfa_cleared` written to the event log by the same statement, and the owner is mailed. What was removed, counted by factor;
   * undefined when there is no such user.
   */
  async clearMfa(id: number): Promise<{ user: User; removed: Record<string, number> } | undefined> {
    const { db, audit, now } = this.deps;
    const [user] = await db.select().from(users).where(eq(users.id, id)).limit(1);
    if (!user) return undefined;
    const removals = secondFactorRemovals(db, (userId) => eq(userId, id), this.deps.factors);
    const cleared = userEvent('auth.user.mfa_cleared', sql`select ${users.id} as user_id from ${users} where ${users.id} = ${id}`, clearedEventFields(removals.counts));
    const [row] = await db
      .with(...removals.ctes, ...accountEventRows(db, now(), cleared))
      .select({ counts: removals.counts, deleted: removals.deleted })
      .from(sql`(select 1) as one`);
    const counts = row?.counts ?? {};
    this.deps.notices?.notify({ kind: 'mfa_cleared', account: String(id), to: user.email, at: now() });
    await audit.record({ type: 'mfa_cleared', userId: id, detail: `operator: ${removalDetail(this.deps.factors, counts)}` });
    return { user, removed: counts };
  }

  async user(id: number): Promise<UserSummary | undefined> {
    const { db, now } = this.deps;
    const [user] = await db.select().from(users).where(eq(users.id, id)).limit(1);
    if (!user) return undefined;
    const [live] = await db
      .select({ n: count() })
      .from(sessions)
      .where(and(eq(sessions.userId, id), gt(sessions.refreshExpiresAt, now())));
    const identities = await db
      .select({ provider: oidcIdentities.provider, email: oidcIdentities.email, linkedAt: oidcIdentities.linkedAt, lastUsedAt: oidcIdentities.lastUsedAt })
      .from(oidcIdentities)
      .where(eq(oidcIdentities.userId, id))
      .orderBy(asc(oidcIdentities.id));
    return { user, sessions: live?.n ?? 0, identities };
  }

  /** A page of users by id; `prefix` matches the start of the username or the e-mail address. */
  async users(query: UserQuery): Promise<User[]> {
    const conditions = [];
    if (query.prefix) {
      const pattern = `${escapeLike(query.prefix.toLowerCase())}%`;
      conditions.push(or(like(sql`lower(${users.username})`, pattern), like(users.email, pattern))!);
    }
    if (query.afterId !== undefined) conditions.push(gt(users.id, query.afterId));
    return this.deps.db
      .select()
      .from(users)
      .where(conditions.length ? and(...conditions) : undefined)
      .orderBy(asc(users.id))
      .limit(query.limit);
  }

  /**
   * Bans the user until `until` (null: until lifted) and ends every session of the user in the same
   * statement. A ban of a banned user replaces its end and reason. Undefined when there is no such user.
   */
  async ban(id: number, until: Date | null, reason: string | null): Promise<User | undefined> {
    const { db, audit, now } = this.deps;
    const at = now();
    const banned = db.$with('banned').as(
      db.update(users).set({ bannedAt: at, bannedUntil: until, banReason: reason, updatedAt: at }).where(eq(users.id, id)).returning(),
    );
    const ended = db.$with('ended').as(
      db
        .delete(sessions)
        .where(sql`${sessions.userId} in (select id from banned)`)
        .returning({ userId: sessions.userId, publicId: sessions.publicId }),
    );
    const events = accountEventRows(
      db,
      at,
      userEvent('auth.user.banned', sql`select id as user_id from ${banned}`, { until: sql`${until ? formatTime(until) : null}::text`, reason: sql`${reason}::text` }),
      sessionsEnded(sql`select user_id, public_id from ${ended}`, 'banned'),
    );
    // Data-modifying CTEs run whether or not the select reads them: one statement, so the ban, the
    // end of the sessions and their events happen together (a login racing it is refused by its own
    // insert's condition).
    const [row] = await db
      .with(banned, ended, ...events)
      .select({ found: sql<string | number>`(select count(*) from banned)`, publicId: sql<string | null>`(select string_agg(public_id::text, ',') from ended)` })
      .from(sql`(select 1) as one`);
    if (!row || Number(row.found) === 0) return undefined;
    const [user] = await db.select().from(users).where(eq(users.id, id)).limit(1);
    if (!user) return undefined;
    const endedIds = row.publicId ? row.publicId.split(',') : [];
    await audit.record(
      ...endedIds.map((sessionId) => ({ type: 'session_ended' as const, userId: id, sessionId, detail: 'ban' })),
      { type: 'user_banned', userId: id, detail: until ? `until ${until.toISOString().slice(0, 19)}Z` : 'until lifted' },
    );
    return user;
  }

  /**
   * Lifts the ban; undefined when there is no such user. A user who was not banned stays so (no
   * event); the lifting of a ban writes auth.user.unbanned in the same statement.
   */
  async unban(id: number): Promise<User | undefined> {
    const { db, audit, now } = this.deps;
    const at = now();
    // `before` reads the row as it was when the statement began (every part of a statement does).
    const before = db.$with('before').as(db.select({ id: users.id, bannedAt: users.bannedAt }).from(users).where(eq(users.id, id)));
    const lifted = db.$with('lifted').as(
      db.update(users).set({ bannedAt: null, bannedUntil: null, banReason: null, updatedAt: at }).where(eq(users.id, id)).returning({ id: users.id }),
    );
    const unbanned = userEvent('auth.user.unbanned', sql`select l.id as user_id from ${lifted} l join ${before} b on b.id = l.id where b.banned_at is not null`);
    const [row] = await db
      .with(before, lifted, ...accountEventRows(db, at, unbanned))
      .select({ wasBanned: sql<boolean>`${before.bannedAt} is not null` })
      .from(before)
      .innerJoin(lifted, sql`${lifted.id} = ${before.id}`);
    if (!row) return undefined;
    const [user] = await db.select().from(users).where(eq(users.id, id)).limit(1);
    if (!user) return undefined;
    if (row.wasBanned) await audit.record({ type: 'user_unbanned', userId: id });
    return user;
  }
}
