import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, smallint, text, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';

export const users = pgTable(
  'users',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** Stored as typed; unique case-insensitively. */
    username: varchar('username', { length: 50 }).notNull(),
    /** Stored lower-cased. */
    email: varchar('email', { length: 254 }).notNull(),
    passwordHash: text('password_hash').notNull(),
    nickname: varchar('nickname', { length: 50 }).notNull(),
    avatar: varchar('avatar', { length: 512 }).notNull().default(''),
    gender: smallint('gender').notNull().default(0),
    phone: varchar('phone', { length: 20 }).notNull().default(''),
    roles: text('roles').array().notNull().default(sql`ARRAY['user']::text[]`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** When an operator banned the user (POST /internal/v1/users/:id/ban); null: not banned. */
    bannedAt: timestamp('banned_at', { withTimezone: true }),
    /** When the ban ends by itself; null with banned_at set: until lifted. */
    bannedUntil: timestamp('banned_until', { withTimezone: true }),
    /** The operator's reason, for operators only (never shown to the user). */
    banReason: varchar('ban_reason', { length: 200 }),
    /** When the owner proved the address (a mailed code, or a completed password reset); null: not verified (issue 31). */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('users_username_lower_key').on(sql`lower(${t.username})`),
    uniqueIndex('users_email_key').on(t.email),
  ],
);

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
    /** How the session signed in: `password`, `password+totp`, `recovery_code` or `passkey` (AuthMethod). */
    authMethod: varchar('auth_method', { length: 20 }).notNull().default('password'),
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
 * One-time codes of the forgotten-password flow. Only a keyed digest of the 6-digit code is stored
 * (HMAC-SHA256 under a subkey of AUTH_KEY_SECRET, which is not in the database: see digestCode).
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

/**
 * The keys that sign access tokens (Ed25519, EdDSA), shared by every instance. `generation` numbers
 * them: the unique index makes two instances that create the same next key at once agree on one.
 * The private key is stored only encrypted (AES-256-GCM under a subkey of AUTH_KEY_SECRET, which is
 * not in the database; see src/accounts/signing-keys.ts). A key is published (in the JWKS) from
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

// ------------------------------------------------------------------ issue 31: verified e-mail

/**
 * One-time codes that prove an address (issue 31): `verify` mailed to the account's address (at
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

// ---------------------------------------------------------------- issue 31, totp: TOTP, recovery codes, login challenges

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
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Tries counted before each comparison (at most 5 are ever compared). */
    tries: smallint('tries').notNull().default(0),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('mfa_challenges_public_id_key').on(t.publicId), index('mfa_challenges_user_id_idx').on(t.userId)],
);

// ------------------------------------------------------------------ passkeys (issue 31)

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
