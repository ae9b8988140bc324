// The account itself: the one table every account feature refers to.
import { sql } from 'drizzle-orm';
import { integer, pgTable, smallint, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

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
    /** When the owner proved the address (a mailed code, or a completed password reset); null: not verified. */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('users_username_lower_key').on(sql`lower(${t.username})`),
    uniqueIndex('users_email_key').on(t.email),
  ],
);
