// Passkeys and their outstanding ceremonies' challenges.
import { bigint, index, integer, pgTable, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from '../shared/schema.js';

/**
 * A user's passkeys (WebAuthn credentials), at most MAX_PASSKEYS_PER_USER each. The public key is
 * no secret; the counter is the authenticator's signature counter as last seen (a lower or equal one
 * from an authenticator that counts refuses the login: a cloned credential).
 */
export const webauthnCredentials = pgTable(
  'webauthn_credentials',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** The passkey's id as clients see it (GET /passkeys, DELETE /passkeys/:id). */
    publicId: uuid('public_id').notNull().defaultRandom(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The credential id, base64url (at most 1023 bytes: 1364 characters). */
    credentialId: varchar('credential_id', { length: 1364 }).notNull(),
    /** The COSE public key, base64url (at most 2048 bytes: 2731 characters). */
    publicKey: varchar('public_key', { length: 2731 }).notNull(),
    /** The signature counter (unsigned 32 bits). */
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    /** Known transports, comma-separated (usb, nfc, ble, smart-card, hybrid, internal, cable). */
    transports: varchar('transports', { length: 100 }).notNull().default(''),
    name: varchar('name', { length: 64 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('webauthn_credentials_credential_id_key').on(t.credentialId),
    uniqueIndex('webauthn_credentials_public_id_key').on(t.publicId),
    index('webauthn_credentials_user_id_idx').on(t.userId),
  ],
);

/**
 * Outstanding WebAuthn challenges: single use (deleted when used), alive for 5 minutes, bounded per
 * user and in all. Only a keyed digest of each challenge is kept (HMAC under the
 * `webauthn-challenge-digest` subkey of AUTH_KEY_SECRET). `user_id`: the user a registration
 * challenge was issued to; null for a login challenge (discoverable credentials: nobody named yet).
 */
export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    digest: varchar('digest', { length: 64 }).notNull(),
    /** `register`, `login` or `reauth` (a re-authentication, with its user). */
    purpose: varchar('purpose', { length: 10 }).notNull(),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('webauthn_challenges_digest_key').on(t.digest),
    index('webauthn_challenges_user_id_idx').on(t.userId, t.id),
    index('webauthn_challenges_expires_at_idx').on(t.expiresAt),
  ],
);
