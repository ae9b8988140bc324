// The event log (issue 39): durable events of every instance sharing the database, read in id order.
//
// Ids are given in commit order, which is what lets a reader resume from the last id it saw. A
// sequence alone would not do: two writers take 10 and 11, the one with 11 commits first, a reader
// reads 11 and resumes after it, and 10, committed a moment later, is skipped for ever (the usual
// outbox trap). So every write takes the transaction-level advisory lock EVENT_LOG_LOCK_KEY right
// before it takes its ids, and holds it until its commit: writers take ids one after the other, each
// after the previous one committed (PostgreSQL releases a transaction's locks after its commit is
// visible), and a snapshot that sees id N sees every committed id below it. The lock is held from the
// insert to the commit; PostgreSQL may run the lock's CTE before the statement's other data-modifying
// CTEs unless the main query reads those first, so a statement that logs events reads its changes in
// its main query (src/accounts/shared/account-events.ts), keeping the changes out of the locked part.
//
// Writes are single statements (the repository avoids db.transaction(): src/db/client.ts): the lock is
// a CTE that the insert reads, so it is taken before the insert's first row draws its id.
import { sql, type SQL } from 'drizzle-orm';
import { notifiesCommits, type Database, type Db } from '../../db/client.js';
import { eventLog } from './schema.js';

/** The advisory lock every write to the log holds from its ids to its commit (the bytes of "chatevnt"). */
export const EVENT_LOG_LOCK_KEY = 0x6368617465766e74n;

/** The notification channel a statement that logs events notifies (PGlite's follower listens: tail.ts). */
export const EVENT_LOG_CHANNEL = 'event_log';

/** Rows one read returns at most. */
export const MAX_READ = 1_000;

/** An event as the log keeps it. */
export interface StoredEvent {
  id: number;
  type: string;
  /** The event's JSON without `id`. */
  payload: string;
}

/** An event to store: its type and its JSON without `id`. */
export interface EventToStore {
  type: string;
  payload: string;
}

/**
 * The CTEs that store `rows` in the log inside a statement that makes the change they report
 * (the transactional outbox: both or neither). `rows` selects `type`, `payload` and `ord` (the order
 * of the statement's events); put the returned CTEs last in `db.with(...)`, after those `rows` reads.
 * @example
 * const logged = logEvents(db, sql`select 'auth.user.deleted' as type, json_build_object(...)::text as payload, 0 as ord from gone`)
 * await db.with(gone, ...logged).select({ n: count() }).from(gone)
 */
export function logEvents(db: Db, rows: SQL, { notify = true }: { notify?: boolean } = {}) {
  // The notice wakes this process's follower at the commit on PGlite (Database.listen), the only place
  // one listens; the appender's own batches go without one: its follower takes them as they are stored
  // (tail.stored()).
  const notice = notify && notifiesCommits(db) ? sql` from (select pg_notify(${EVENT_LOG_CHANNEL}, '')) as notice` : sql``;
  const lock = db.$with('event_log_lock', { locked: sql<string>`locked`.as('locked') }).as(sql`select pg_advisory_xact_lock(${sql.raw(EVENT_LOG_LOCK_KEY.toString())}) as locked${notice}`);
  const logged = db.$with('event_log_logged', { id: sql<number>`id`.as('id') }).as(
    sql`insert into ${eventLog} (type, payload) select e.type, e.payload from ${lock}, (${rows}) as e order by e.ord returning id`,
  );
  return [lock, logged] as const;
}

/**
 * @example
 * const log = createEventLog(database)
 * await log.append([{ type: 'router.closed', payload: '{"type":"router.closed",…}' }])
 * for (const event of await log.after(lastId)) …
 */
export function createEventLog(database: Database) {
  const { db } = database;
  return {
    /** Stores `events` in their order, in one statement; resolves with the id of the last (undefined for none). */
    async append(events: readonly EventToStore[]): Promise<number | undefined> {
      if (events.length === 0) return undefined;
      const batch = JSON.stringify(events.map((event) => [event.type, event.payload]));
      const rows = sql`select x.e->>0 as type, x.e->>1 as payload, x.ord from json_array_elements(${batch}::json) with ordinality as x(e, ord)`;
      const [lock, logged] = logEvents(db, rows, { notify: false });
      const [result] = await db.with(lock, logged).select({ last: sql<string | null>`max(${logged.id})` }).from(logged);
      return result?.last == null ? undefined : Number(result.last);
    },

    /** Up to `limit` events with an id above `id`, in id order. */
    async after(id: number, limit = MAX_READ): Promise<StoredEvent[]> {
      const rows = await db
        .select({ id: eventLog.id, type: eventLog.type, payload: eventLog.payload })
        .from(eventLog)
        .where(sql`${eventLog.id} > ${id}`)
        .orderBy(eventLog.id)
        .limit(Math.min(limit, MAX_READ));
      return rows.map((row) => ({ id: Number(row.id), type: row.type, payload: row.payload }));
    },

    /**
     * For resume and resync decisions: the oldest id kept (undefined: none is), the newest committed
     * (0: none; no id below it is still to commit, by the commit lock), and the newest given by the
     * sequence (an insert in flight may hold it; after every event was pruned, still the last one given).
     */
    async bounds(): Promise<{ first: number | undefined; last: number; given: number }> {
      const [row] = await db
        .select({
          first: sql<string | null>`min(${eventLog.id})`,
          last: sql<string | null>`max(${eventLog.id})`,
          given: sql<string>`(select case when is_called then last_value else 0 end from event_log_id_seq)`,
        })
        .from(eventLog);
      return { first: row?.first == null ? undefined : Number(row.first), last: Number(row?.last ?? 0), given: Number(row?.given ?? 0) };
    },

    /**
     * Deletes up to `batch` of the oldest events stored before `before` (and with a log id of at most
     * `upTo`, when given); resolves with how many. Small batches by id keep each delete short: writers
     * never wait on it (they lock no row it deletes), and rows another instance's prune is deleting are
     * skipped rather than waited for.
     */
    async prune(before: Date, batch = 5_000, upTo?: number): Promise<number> {
      const bound = upTo === undefined ? sql`` : sql` and ${eventLog.id} <= ${upTo}`;
      const gone = db.$with('gone').as(
        db
          .delete(eventLog)
          .where(sql`${eventLog.id} in (select ${eventLog.id} from ${eventLog} where ${eventLog.at} < ${before.toISOString()}::timestamptz${bound} order by ${eventLog.id} limit ${batch} for update skip locked)`)
          .returning({ id: eventLog.id }),
      );
      const [row] = await db.with(gone).select({ n: sql<number>`count(*)::int` }).from(gone);
      return row?.n ?? 0;
    },

    /** How many events stored before `before` have a log id above `after` (what retention keeps for the webhook). */
    async olderThanAfter(before: Date, after: number): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(eventLog)
        .where(sql`${eventLog.at} < ${before.toISOString()}::timestamptz and ${eventLog.id} > ${after}`);
      return row?.n ?? 0;
    },
  };
}

export type EventLog = ReturnType<typeof createEventLog>;
