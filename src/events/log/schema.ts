// The event log's table (issue 39): every durable event of every instance sharing the database, in the
// order readers see them. An id is given under the log's commit lock (log.ts), so ids increase in
// commit order: a reader that has read up to N never finds a smaller id committed later.
import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const eventLog = pgTable(
  'event_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    type: text('type').notNull(),
    /** The event's JSON without its `id` (the reader adds it): written once, read as text. */
    payload: text('payload').notNull(),
    /** When it was stored (retention prunes by it). */
    at: timestamp('at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  // BRIN, not a B-tree: `at` grows with the id, so a summary per block range finds the old rows,
  // and an insert costs almost nothing (a B-tree entry per event was a third of a PGlite insert's cost).
  (table) => [index('event_log_at_brin').using('brin', table.at)],
);

/**
 * The webhook's place in the log, one row: the log id of the last event delivered (or parked), and the
 * lease that lets one instance deliver (log/delivery.ts). A lease with an expiry rather than a lock
 * held by a connection or a transaction: the repository writes single statements (src/db/client.ts),
 * and a holder that dies simply stops renewing it.
 */
export const webhookState = pgTable('webhook_state', {
  id: integer('id').primaryKey(),
  cursor: bigint('cursor', { mode: 'number' }).notNull(),
  holder: text('holder'),
  leaseUntil: timestamp('lease_until', { withTimezone: true }),
});

/**
 * Batches the webhook gave up on (EVENTS_WEBHOOK_GIVE_UP_S of failures), kept with what they carried
 * so that a redelivery sends the same events under the same webhook-id even after retention pruned them.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** The batch's webhook-id. */
    id: text('id').primaryKey(),
    /** Log ids of its first and last events. */
    firstLogId: bigint('first_log_id', { mode: 'number' }).notNull(),
    lastLogId: bigint('last_log_id', { mode: 'number' }).notNull(),
    events: integer('events').notNull(),
    attempts: integer('attempts').notNull(),
    lastError: text('last_error').notNull(),
    /** failed: parked; redeliver: asked to be sent again; delivered: a redelivery was accepted. */
    status: text('status').notNull(),
    parkedAt: timestamp('parked_at', { withTimezone: true }).notNull(),
    /** The JSON array of its events, as sent. */
    body: text('body').notNull(),
  },
  (table) => [index('webhook_deliveries_status_idx').on(table.status, table.parkedAt)],
);
