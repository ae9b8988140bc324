// TOTP factors, recovery codes and the login's second-step challenges.
import { bigint, index, integer, pgTable, smallint, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { users } from '../shared/schema.js';

/**
 * A user's TOTP factor (RFC 6238: SHA-1, 6 digits, 30 s). One row per user: pending (enabled_at null)
 * from POST /mfa/totp/setup until a first code enables it. The secret is stored only sealed
 * (AES-256-GCM under the `totp-secret-encryption` subkey of AUTH_KEY_SECRET, the user id as context).
 */
export const totpFactors = pgTable('totp_factors', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  /** `v1.<iv>.<ciphertext>.<tag>` (base64url) of the base32 secret. */
  secret: varchar('secret', { length: 256 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  /** When a first code enabled it; null: pending. */
  enabledAt: timestamp('enabled_at', { withTimezone: true }),
  /** The last 30-second time step a code was accepted for: a code of it or an earlier step is refused (one use per code). */
  lastStep: bigint('last_step', { mode: 'number' }),
});

/** The 10 single-use recovery codes of an enabled TOTP factor, as HMAC digests (`recovery-code-digest` subkey) of `<user id>:<code>`. */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: varchar('code_hash', { length: 64 }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('recovery_codes_user_id_idx').on(t.userId)],
);

/**
 * The second step of a login (2007): `<public id>.<secret>` given to the client, the secret stored as an
 * HMAC digest (`mfa-challenge-digest` subkey). Single use, 5 minutes, 5 tries; bound to the user and to
 * the password hash it was issued under (password_tag: SHA-256 of it), so a password change kills it.
 */
export const mfaChallenges = pgTable(
  'mfa_challenges',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    publicId: varchar('public_id', { length: 32 }).notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    secretHash: varchar('secret_hash', { length: 64 }).notNull(),
    passwordTag: varchar('password_tag', { length: 64 }).notNull(),
    /** How the login proved its first factor (an AuthMethod: `password`, `oidc:<provider>`): the session's method names it. */
    firstFactor: varchar('first_factor', { length: 20 }).notNull().default('password'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Tries counted before each comparison (at most 5 are ever compared). */
    tries: smallint('tries').notNull().default(0),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('mfa_challenges_public_id_key').on(t.publicId), index('mfa_challenges_user_id_idx').on(t.userId)],
);
