// The codes that prove an address (verification and change).
import { bigint, index, integer, pgTable, smallint, text, timestamp, varchar } from 'drizzle-orm/pg-core';
import { users } from '../shared/schema.js';

/**
 * One-time codes that prove an address: `verify` mailed to the account's address (at
 * registration and on request), `change` mailed to the address the account asked to move to. Only a
 * keyed digest of the 6-digit code is stored (HMAC-SHA256 under the `email-code-digest` subkey of
 * AUTH_KEY_SECRET). One live code per user and purpose: a new one retires the earlier. A code dies
 * when used, at expiry (15 minutes), after 5 wrong tries, or (verify) once the account's address is
 * no longer the one it was mailed to. Rows go with their user.
 */
export const emailCodes = pgTable(
  'email_codes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** `verify` or `change`. */
    purpose: varchar('purpose', { length: 10 }).notNull(),
    /** The address the code was mailed to, lower-cased: the account's (verify) or the new one (change). */
    email: varchar('email', { length: 254 }).notNull(),
    codeHash: text('code_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    failedAttempts: smallint('failed_attempts').notNull().default(0),
    /** When the code was used, or retired by a newer one. */
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('email_codes_user_id_idx').on(t.userId, t.purpose, t.createdAt)],
);
