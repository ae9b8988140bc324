// What the webhook keeps in the database: its cursor in the event log, the lease that lets one
// instance deliver, and the batches it parked. Every write is one statement (no db.transaction():
// src/db/client.ts), and each that moves the cursor checks the lease in the same statement, so an
// instance that lost the lease can never move the cursor past what the new holder still sends.
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { eventLog, webhookDeliveries, webhookState } from './schema.js';

const STATE_ID = 1;
/** How much of a failure's text a parked row keeps. */
export const MAX_ERROR_LENGTH = 500;
export const MAX_LIST = 500;

export type DeliveryStatus = 'failed' | 'redeliver' | 'delivered';

/** A parked batch as listed. Ids are log ids (the caller turns them into event ids). */
export interface ParkedDelivery {
  id: string;
  firstLogId: number;
  lastLogId: number;
  events: number;
  attempts: number;
  lastError: string;
  status: DeliveryStatus;
  parkedAt: Date;
}

/** A batch to park: the events it carried (`body`, a JSON array) and why it failed. */
export interface BatchToPark {
  id: string;
  firstLogId: number;
  lastLogId: number;
  events: number;
  attempts: number;
  lastError: string;
  body: string;
}

export interface DeliveryStoreOptions {
  /** This instance's name in the lease. */
  holder: string;
  /** How long a lease lasts without renewal: a dead holder's successor waits at most this long. */
  leaseMs: number;
  /**
   * The database is this process's alone (PGlite): the lease is taken whoever held it, as a holder
   * killed before it released it is gone for sure.
   */
  exclusive: boolean;
}

/**
 * @example
 * const store = createDeliveryStore(database, { holder: randomUUID(), leaseMs: 10_000, exclusive: database.kind === 'pglite' })
 * const cursor = await store.acquire()   // undefined: another instance delivers
 */
/** What a parked batch's listing and its redelivery's answer read of its row. */
const PARKED_FIELDS = {
  id: webhookDeliveries.id,
  firstLogId: webhookDeliveries.firstLogId,
  lastLogId: webhookDeliveries.lastLogId,
  events: webhookDeliveries.events,
  attempts: webhookDeliveries.attempts,
  lastError: webhookDeliveries.lastError,
  status: sql<DeliveryStatus>`${webhookDeliveries.status}`,
  parkedAt: webhookDeliveries.parkedAt,
};

export function createDeliveryStore(database: Database, options: DeliveryStoreOptions) {
  const { db } = database;
  const leaseEnd = sql`now() + ${`${options.leaseMs} milliseconds`}::interval`;
  const held = and(eq(webhookState.id, STATE_ID), eq(webhookState.holder, options.holder));

  return {
    /**
     * Takes or renews the lease; resolves with the cursor when this instance holds it now, else
     * undefined. The first holder ever starts at `initial` (where its process joined the log) or else
     * at the log's newest event: a webhook configured for the first time is not sent the history.
     */
    async acquire(initial?: number): Promise<number | undefined> {
      const rows = await db
        .insert(webhookState)
        .values({ id: STATE_ID, cursor: initial ?? sql`(select coalesce(max(${eventLog.id}), 0) from ${eventLog})`, holder: options.holder, leaseUntil: leaseEnd })
        .onConflictDoUpdate({
          target: webhookState.id,
          set: { holder: options.holder, leaseUntil: leaseEnd },
          ...(options.exclusive
            ? {}
            : { setWhere: sql`${webhookState.holder} = ${options.holder} or ${webhookState.holder} is null or ${webhookState.leaseUntil} is null or ${webhookState.leaseUntil} < now()` }),
        })
        .returning({ cursor: webhookState.cursor });
      return rows[0]?.cursor;
    },

    /** Moves the cursor to `lastLogId` (never back) and renews the lease; false: the lease is lost. */
    async advance(lastLogId: number): Promise<boolean> {
      const rows = await db
        .update(webhookState)
        .set({ cursor: sql`greatest(${webhookState.cursor}, ${lastLogId})`, leaseUntil: leaseEnd })
        .where(held)
        .returning({ id: webhookState.id });
      return rows.length > 0;
    },

    /** Parks `batch` and moves the cursor past it, both or neither; false: the lease is lost (neither). */
    async park(batch: BatchToPark): Promise<boolean> {
      const moved = db.$with('moved').as(
        db
          .update(webhookState)
          .set({ cursor: sql`greatest(${webhookState.cursor}, ${batch.lastLogId})`, leaseUntil: leaseEnd })
          .where(held)
          .returning({ id: webhookState.id }),
      );
      const parked = db.$with('parked').as(
        db
          .insert(webhookDeliveries)
          .select(
            db
              .select({
                id: sql`${batch.id}`.as('id'),
                firstLogId: sql`${batch.firstLogId}::bigint`.as('first_log_id'),
                lastLogId: sql`${batch.lastLogId}::bigint`.as('last_log_id'),
                events: sql`${batch.events}::int`.as('events'),
                attempts: sql`${batch.attempts}::int`.as('attempts'),
                lastError: sql`${batch.lastError.slice(0, MAX_ERROR_LENGTH)}`.as('last_error'),
                status: sql`'failed'`.as('status'),
                parkedAt: sql`now()`.as('parked_at'),
                body: sql`${batch.body}`.as('body'),
              })
              .from(moved),
          )
          .onConflictDoNothing()
          .returning({ id: webhookDeliveries.id }),
      );
      const [row] = await db.with(moved, parked).select({ moved: sql<number>`(select count(*)::int from ${moved})` }).from(sql`(select 1) as one`);
      return (row?.moved ?? 0) > 0;
    },

    /** Gives the lease up (at shutdown): another instance takes over at once. */
    async release(): Promise<void> {
      await db.update(webhookState).set({ leaseUntil: null }).where(held);
    },

    /** The cursor (undefined: no webhook ever delivered from this database). */
    async cursor(): Promise<number | undefined> {
      const [row] = await db.select({ cursor: webhookState.cursor }).from(webhookState).where(eq(webhookState.id, STATE_ID));
      return row?.cursor;
    },

    /** The cursor while some instance holds the lease (a webhook is configured there), else null. */
    async leasedCursor(): Promise<number | null> {
      const [row] = await db
        .select({ cursor: webhookState.cursor })
        .from(webhookState)
        .where(and(eq(webhookState.id, STATE_ID), sql`${webhookState.leaseUntil} > now()`));
      return row?.cursor ?? null;
    },

    /** Parked batches of `status`, oldest first. */
    async list(status: DeliveryStatus, limit: number): Promise<ParkedDelivery[]> {
      return db
        .select(PARKED_FIELDS)
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.status, status))
        .orderBy(asc(webhookDeliveries.parkedAt), asc(webhookDeliveries.id))
        .limit(Math.min(Math.max(1, limit), MAX_LIST));
    },

    /** Asks for a parked batch to be sent again: `unknown`, `not_failed` (asked already, or delivered), or the batch. */
    async requestRedelivery(id: string): Promise<ParkedDelivery | 'unknown' | 'not_failed'> {
      const rows = await db
        .update(webhookDeliveries)
        .set({ status: 'redeliver' })
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'failed')))
        .returning(PARKED_FIELDS);
      if (rows[0]) return rows[0];
      const [known] = await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
      return known ? 'not_failed' : 'unknown';
    },

    /** Batches asked to be sent again, with their events, oldest first. */
    async requested(limit = 10): Promise<Array<{ id: string; body: string; events: number; attempts: number }>> {
      return db
        .select({ id: webhookDeliveries.id, body: webhookDeliveries.body, events: webhookDeliveries.events, attempts: webhookDeliveries.attempts })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.status, 'redeliver'))
        .orderBy(asc(webhookDeliveries.parkedAt), asc(webhookDeliveries.id))
        .limit(limit);
    },

    /** A redelivery's outcome: delivered, or failed (parked again, now). */
    async settleRedelivery(id: string, outcome: { delivered: true; attempts: number } | { delivered: false; attempts: number; lastError: string }): Promise<void> {
      await db
        .update(webhookDeliveries)
        .set(
          outcome.delivered
            ? { status: 'delivered', attempts: outcome.attempts }
            : { status: 'failed', attempts: outcome.attempts, lastError: outcome.lastError.slice(0, MAX_ERROR_LENGTH), parkedAt: sql`now()` },
        )
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'redeliver')));
    },

    /** Seconds since the oldest event after the cursor was stored (0: none waits). */
    async lagSeconds(): Promise<number> {
      const [row] = await db
        .select({
          lag: sql<string | null>`extract(epoch from now() - (select ${eventLog.at} from ${eventLog} where ${eventLog.id} > ${webhookState.cursor} order by ${eventLog.id} limit 1))`,
        })
        .from(webhookState)
        .where(eq(webhookState.id, STATE_ID));
      return Math.max(0, Number(row?.lag ?? 0));
    },

    /** Batches parked and not (yet) delivered again. */
    async parkedCount(): Promise<number> {
      const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(webhookDeliveries).where(eq(webhookDeliveries.status, 'failed'));
      return row?.n ?? 0;
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
