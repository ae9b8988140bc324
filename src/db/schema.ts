import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, smallint, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

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
  },
  (t) => [
    uniqueIndex('sessions_access_id_key').on(t.accessId),
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
