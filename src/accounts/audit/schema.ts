// The audit trail's table.
import { bigint, index, integer, pgTable, timestamp, uuid, varchar } from 'drizzle-orm/pg-core';

/**
 * The audit trail of authentication events (ASVS 16.3.1). No foreign key: a row outlives its user
 * (with the personal fields erased, see AuditLog.forgetUser) and its session. Never holds a secret.
 */
export const authEvents = pgTable(
  'auth_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    type: varchar('type', { length: 40 }).notNull(),
    userId: integer('user_id'),
    /** The public id of the session concerned, when there is one. */
    sessionId: uuid('session_id'),
    /** Login failures: the account as typed, trimmed and lower-cased. */
    account: varchar('account', { length: 254 }),
    /** What happened or who did it, e.g. the failure reason or who ended a session. */
    detail: varchar('detail', { length: 40 }),
    ip: varchar('ip', { length: 64 }),
    userAgent: varchar('user_agent', { length: 200 }),
  },
  (t) => [
    index('auth_events_occurred_at_idx').on(t.occurredAt),
    index('auth_events_user_id_idx').on(t.userId, t.id),
    index('auth_events_type_idx').on(t.type, t.id),
  ],
);
