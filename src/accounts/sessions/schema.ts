// Sessions, their rotated refresh tokens and the keys that sign access tokens.
import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from '../shared/schema.js';

/**
 * One row per session (register and login each open one). Tokens are `<id>.<secret>`; only the
 * SHA-256 digest of the secret is stored, looked up by id and compared in constant time.
 */
export const sessions = pgTable(
  'sessions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    accessId: text('access_id').notNull(),
    accessHash: text('access_hash').notNull(),
    accessExpiresAt: timestamp('access_expires_at', { withTimezone: true }).notNull(),
    refreshId: text('refresh_id').notNull(),
    refreshHash: text('refresh_hash').notNull(),
    refreshExpiresAt: timestamp('refresh_expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
    ip: varchar('ip', { length: 64 }),
    userAgent: varchar('user_agent', { length: 512 }),
    /** The session's id as clients see it (GET /sessions): random, so it reveals neither a token nor a count. */
    publicId: uuid('public_id').notNull().defaultRandom(),
    /** How the session signed in: `password`, `password+totp`, `recovery_code`, `passkey`, `oidc:<provider>` (+`+totp`, `+recovery_code`) (AuthMethod). */
    authMethod: varchar('auth_method', { length: 40 }).notNull().default('password'),
    /**
     * When the session last proved a factor again (POST /reauth); null: only at sign-in. Adding a
     * factor or changing the address needs a sign-in or a re-authentication within REAUTH_WINDOW_S.
     */
    reauthenticatedAt: timestamp('reauthenticated_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('sessions_access_id_key').on(t.accessId),
    uniqueIndex('sessions_public_id_key').on(t.publicId),
    uniqueIndex('sessions_refresh_id_key').on(t.refreshId),
    index('sessions_user_id_idx').on(t.userId),
  ],
);

/**
 * Refresh tokens already rotated away, kept to detect reuse (RFC 9700 §4.14.2): presenting one
 * again revokes its session. Rows go with their session.
 */
export const rotatedRefreshTokens = pgTable(
  'rotated_refresh_tokens',
  {
    refreshId: text('refresh_id').primaryKey(),
    refreshHash: text('refresh_hash').notNull(),
    sessionId: bigint('session_id', { mode: 'number' })
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    rotatedAt: timestamp('rotated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('rotated_refresh_tokens_session_id_idx').on(t.sessionId)],
);

/**
 * The keys that sign access tokens (Ed25519, EdDSA), shared by every instance. `generation` numbers
 * them: the unique index makes two instances that create the same next key at once agree on one.
 * The private key is stored only encrypted (AES-256-GCM under a subkey of AUTH_KEY_SECRET, which is
 * not in the database; see signing-keys.ts). A key is published (in the JWKS) from
 * publish_at, signs from sign_from (at least one access-token lifetime later, except the very first),
 * and leaves the JWKS at retire_at (the last token it signed has expired by then); null while it is
 * still the newest key.
 */
export const signingKeys = pgTable(
  'signing_keys',
  {
    kid: varchar('kid', { length: 64 }).primaryKey(),
    generation: integer('generation').notNull(),
    /** The public key as a JWK (JSON text): {kty: OKP, crv: Ed25519, x}. */
    publicJwk: varchar('public_jwk', { length: 512 }).notNull(),
    /** `v1.<iv>.<ciphertext>.<tag>` (base64url) of the PKCS#8 private key; the kid is the additional data. */
    privateKey: varchar('private_key', { length: 512 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    publishAt: timestamp('publish_at', { withTimezone: true }).notNull(),
    signFrom: timestamp('sign_from', { withTimezone: true }).notNull(),
    retireAt: timestamp('retire_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('signing_keys_generation_key').on(t.generation)],
);
