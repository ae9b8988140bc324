// The audit trail of authentication events: written by the account API, read by operators through
// GET /internal/v1/auth-events, pruned after AUTH_EVENTS_RETENTION_DAYS. Never holds a secret.
import { and, desc, eq, gte, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { authEvents } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { AuthEventType } from '../vocabulary.js';

export { AUTH_EVENT_TYPES, type AuthEventType } from '../vocabulary.js';

/** Who ended a session (`detail` of session_ended). */
export type { SessionEndedBy } from '../vocabulary.js';

export interface AuthEventInput {
  type: AuthEventType;
  userId?: number | null | undefined;
  sessionId?: string | null | undefined;
  account?: string | null | undefined;
  detail?: string | null | undefined;
  ip?: string | null | undefined;
  userAgent?: string | null | undefined;
}

export type AuthEvent = typeof authEvents.$inferSelect;

export interface AuthEventQuery {
  userId?: number | undefined;
  type?: AuthEventType | undefined;
  since?: Date | undefined;
  /** Rows with an id below this one (the cursor of the previous page). */
  beforeId?: number | undefined;
  limit: number;
}

/** Pruning runs on a write at most this often per process. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Rows deleted per pruning statement, so one prune never holds a long lock. */
const PRUNE_BATCH = 5000;
const PRUNE_MAX_BATCHES = 20;

/** The account as typed, normalised for the trail: trimmed, lower-cased, at most 254 characters. */
export function normaliseAccount(account: string): string {
  return Array.from(account.trim().toLowerCase()).slice(0, 254).join('');
}

/** Deletes a feature's rows that were dead by `before` (run with the trail's hourly prune). */
export type PruneDeadRows = (db: Db, before: Date) => Promise<unknown>;

export class AuditLog {
  private lastPrune = 0;
  private pruning: Promise<void> | undefined;

  constructor(
    private readonly deps: { db: Db; now: () => Date; logger: Logger; retentionDays: number; prunes?: readonly PruneDeadRows[] },
  ) {}

  /**
   * Writes events; a failure is logged, never thrown (the audited action has happened already).
   * The account events other services follow (auth.session.ended, auth.user.deleted, ...) are not
   * sent from here: the statement that makes the change writes them to the event log
   * (shared/account-events.ts), so they exist exactly when the change does.
   */
  async record(...events: AuthEventInput[]): Promise<void> {
    if (events.length === 0) return;
    const occurredAt = this.deps.now();
    try {
      await this.deps.db.insert(authEvents).values(
        events.map((e) => ({
          occurredAt,
          type: e.type,
          userId: e.userId ?? null,
          sessionId: e.sessionId ?? null,
          account: e.account ?? null,
          detail: e.detail ?? null,
          ip: e.ip ?? null,
          userAgent: e.userAgent ?? null,
        })),
      );
    } catch (error) {
      this.deps.logger.error({ err: error instanceof Error ? error.message : String(error), types: events.map((e) => e.type) }, 'could not write auth events');
    }
    if (occurredAt.getTime() - this.lastPrune >= PRUNE_INTERVAL_MS) await this.prune();
  }

  /** The oldest time still kept. */
  cutoff(): Date {
    return new Date(this.deps.now().getTime() - this.deps.retentionDays * 86_400_000);
  }

  /**
   * Deletes events older than the retention and the features' rows long dead (`prunes`). Runs on a write at most
   * once an hour; concurrent callers share one run.
   */
  prune(): Promise<void> {
    this.pruning ??= this.pruneNow().finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  private async pruneNow(): Promise<void> {
    const { db, logger } = this.deps;
    this.lastPrune = this.deps.now().getTime();
    const cutoff = this.cutoff();
    try {
      for (let i = 0; i < PRUNE_MAX_BATCHES; i++) {
        const batch = db.select({ id: authEvents.id }).from(authEvents).where(lt(authEvents.occurredAt, cutoff)).limit(PRUNE_BATCH);
        const deleted = await db.delete(authEvents).where(inArray(authEvents.id, batch)).returning({ id: authEvents.id });
        if (deleted.length < PRUNE_BATCH) break;
      }
      // The features' short-lived rows (mailed codes, login challenges), dead for an hour at least.
      const longDead = new Date(this.deps.now().getTime() - 2 * 60 * 60 * 1000);
      for (const prune of this.deps.prunes ?? []) await prune(db, longDead);
    } catch (error) {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'could not prune auth events');
    }
  }

  /** Newest first; rows past the retention are never returned, pruned or not. */
  async list(query: AuthEventQuery): Promise<AuthEvent[]> {
    const conditions: SQL[] = [gte(authEvents.occurredAt, this.cutoff())];
    if (query.userId !== undefined) conditions.push(eq(authEvents.userId, query.userId));
    if (query.type !== undefined) conditions.push(eq(authEvents.type, query.type));
    if (query.since !== undefined) conditions.push(gte(authEvents.occurredAt, query.since));
    if (query.beforeId !== undefined) conditions.push(lt(authEvents.id, query.beforeId));
    return this.deps.db
      .select()
      .from(authEvents)
      .where(and(...conditions))
      .orderBy(desc(authEvents.id))
      .limit(query.limit);
  }

}

/**
 * Account deletion: the user's rows keep their type, time and user id; the account typed, the
 * address and the user agent go. So do those fields of failed logins that typed the deleted
 * username or e-mail address (with no user id, or another one). The rows to erase, as a condition.
 */
export function forgottenEventsOf(userId: number, username: string, email: string): SQL {
  return or(eq(authEvents.userId, userId), inArray(authEvents.account, [normaliseAccount(username), normaliseAccount(email)]))!;
}

/** Opaque page cursor: the id of the last row of the page, base64url. */
export function encodeCursor(id: number): string {
  return Buffer.from(`e${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined;
  const match = /^e([1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const id = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(id) ? id : undefined;
}

