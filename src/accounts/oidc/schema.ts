// Identities at OpenID Connect providers linked to accounts, the web flows under way, the one-time
// codes a finished web flow hands the client app, and the nonces of ID tokens the native flow took.
import { index, integer, pgTable, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from '../shared/schema.js';

/**
 * An account's identity at a provider: the provider's `sub` is unique per provider, so one identity
 * signs in to one account; an account holds at most one identity per provider.
 */
export const oidcIdentities = pgTable(
  'oidc_identities',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** The identity's id as clients see it (GET /identities, DELETE /identities/:id). */
    publicId: uuid('public_id').notNull().defaultRandom(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The provider's name in OIDC_PROVIDERS. */
    provider: varchar('provider', { length: 15 }).notNull(),
    /** The provider's `sub` (at most 255 ASCII characters, OIDC Core 2). */
    subject: varchar('subject', { length: 255 }).notNull(),
    /** The e-mail address the provider gave at the last sign-in, lower-cased; null: none. */
    email: varchar('email', { length: 254 }),
    linkedAt: timestamp('linked_at', { withTimezone: true }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('oidc_identities_provider_subject_key').on(t.provider, t.subject),
    uniqueIndex('oidc_identities_user_provider_key').on(t.userId, t.provider),
    uniqueIndex('oidc_identities_public_id_key').on(t.publicId),
  ],
);

/**
 * Web flows started and not yet back: single use (deleted by the callback that finishes them), alive
 * 10 minutes. Only a keyed digest of the `state` is kept; the PKCE verifier and the nonce stay in the
 * starting browser's signed cookie. `user_id`: the account a link flow links to; null for a sign-in.
 */
export const oidcFlows = pgTable(
  'oidc_flows',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    stateDigest: varchar('state_digest', { length: 64 }).notNull(),
    provider: varchar('provider', { length: 15 }).notNull(),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    /** The public id of the session that started a link flow (it must still be alive at the callback). */
    sessionPublicId: uuid('session_public_id'),
    redirectUri: varchar('redirect_uri', { length: 2048 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('oidc_flows_state_digest_key').on(t.stateDigest), index('oidc_flows_expires_at_idx').on(t.expiresAt)],
);

/** The one-time codes of finished web sign-ins: a keyed digest each, single use, alive 60 seconds. */
export const oidcLoginCodes = pgTable(
  'oidc_login_codes',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    digest: varchar('digest', { length: 64 }).notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: varchar('provider', { length: 15 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('oidc_login_codes_digest_key').on(t.digest), index('oidc_login_codes_expires_at_idx').on(t.expiresAt)],
);

/**
 * The nonces of the ID tokens the native flow accepted (a keyed digest of provider and nonce, as the
 * token carries it), each kept until its token can no longer be accepted: the same token, or another
 * with its nonce, is refused while its row lives.
 */
export const oidcUsedNonces = pgTable(
  'oidc_used_nonces',
  {
    digest: varchar('digest', { length: 64 }).primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('oidc_used_nonces_expires_at_idx').on(t.expiresAt)],
);
