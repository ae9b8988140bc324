// The event log's table (issue 39): every durable event of every instance sharing the database, in the
// order readers see them. An id is given under the log's commit lock (log.ts), so ids increase in
// commit order: a reader that has read up to N never finds a smaller id committed later.
import { sql } from 'drizzle-orm';
import { bigserial, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

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
  (table) => [index('event_log_at_idx').on(table.at)],
);
