// The forgotten-password flow's mailed codes.
import { bigint, index, integer, pgTable, smallint, text, timestamp, varchar } from 'drizzle-orm/pg-core';
import { users } from '../shared/schema.js';

/**
 * One-time codes of the forgotten-password flow. Only a keyed digest of the 6-digit code is stored
 * (HMAC-SHA256 under a subkey of AUTH_KEY_SECRET, which is not in the database: see shared/one-time-code.ts).
 * Several codes of a user may be live at once; a code dies when used, at expiry, when its user's
 * password changes (passwordTag), or after 5 wrong tries from the address that asked for it
 * (requester) or 5 from all other addresses together (others). Rows go with their user.
 */
export const passwordResetCodes = pgTable(
  'password_reset_codes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Wrong tries from addresses other than the one that asked for the code. */
    failedAttempts: smallint('failed_attempts').notNull().default(0),
    /** Wrong tries from the address that asked for the code (see requestedBy). */
    requesterFailedAttempts: smallint('requester_failed_attempts').notNull().default(0),
    /**
     * The client address that asked for the code (its rate-limit key, IPv6 by /64), as a keyed digest
     * (HMAC-SHA256 under a subkey of AUTH_KEY_SECRET): no address at rest. Null for codes of before.
     */
    requestedBy: varchar('requested_by', { length: 64 }),
    /**
     * The password the code can replace: SHA-256 (hex) of the user's password hash when the code was
     * issued (see passwordTag). Once the password changes, by any path, the tags differ and the code
     * is dead, without a write to the code rows (so no lock on them beside the user's row).
     */
    passwordTag: varchar('password_tag', { length: 64 }),
    /** When the code was used (or retired with the old digest scheme). */
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('password_reset_codes_user_id_idx').on(t.userId, t.createdAt)],
);
