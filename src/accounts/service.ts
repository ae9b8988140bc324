// The account service: users, sessions and their tokens. Knows nothing of HTTP.
import { randomUUID } from 'node:crypto';
import { and, eq, getTableColumns, gt, inArray, is, lt, lte, ne, or, SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.js';
import { rotatedRefreshTokens, sessions, users } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { formatTime } from '../time.js';
import { looksLikeJwt, type AccessTokens } from './access-tokens.js';
import { accountMatches, foldedAccount } from './account-name.js';
import type { AuthMethod } from './contract/devices.js';
import { AuthError } from './errors.js';
import { accountKey, userKey } from './login-guard.js';
import { ensureHashCapacity, hashPassword, verifyAgainstDummy, verifyPassword, type HashCost, type HashOptions } from './passwords.js';
import { issueToken, parseToken, secretMatches, type IssuedToken } from './tokens.js';

export type User = typeof users.$inferSelect;

/** An account name as findAccount resolved it: its user, if any, the key of its failure budget, its hashing lane. */
export interface FoundAccount {
  user: User | undefined;
  key: string;
  hashing: HashOptions;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  /** Access token lifetime in seconds. */
  expiresIn: number;
}

/** Who opened a session, kept on the session row so a session list is cheap later. */
export interface SessionClient {
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export interface Authenticated {
  sessionId: number;
  /** The session's public id (the `sid` of its access tokens). */
  sessionPublicId: string;
  user: User;
  /** When the access token presented expires. */
  expiresAt: Date;
  /** When the session last proved a factor: its sign-in, or its latest re-authentication (POST /reauth). */
  authenticatedAt: Date;
}

/** What introspection tells of an active access token (RFC 7662's members). */
export interface ActiveToken {
  sub: string;
  sid: string;
  username: string;
  roles: string[];
  iat: number;
  exp: number;
}

export interface RegisterInput {
  username: string;
  email: string;
  password: string;
  /** Missing or empty: the username. */
  nickname?: string | undefined;
}

export interface ProfileChanges {
  nickname?: string | undefined;
  avatar?: string | undefined;
  gender?: 0 | 1 | 2 | undefined;
  phone?: string | undefined;
}

export interface AuthServiceDeps {
  db: Db;
  /** Signs the access tokens (JWTs) and verifies them. */
  accessTokens: AccessTokens;
  /** Seconds. */
  accessTokenTtl: number;
  /** Seconds. */
  refreshTokenTtl: number;
  now: () => Date;
  logger: Logger;
  /** Told when a rotated refresh token comes back and its session is revoked (for metrics and the audit trail). */
  onRefreshReuse?: (revoked: { userId: number; sessionPublicId: string }, client: SessionClient | undefined) => void;
  /** Seconds after a rotation during which the rotated token, presented again, revokes nothing (default 0). */
  refreshReuseGraceS?: number;
  /** Expected wait for an argon2 slot beyond which the request is refused with `server_busy` (default 2000). */
  hashMaxWaitMs?: number;
  /** argon2id's cost of new hashes; the production parameters when absent (tests give a lower one). */
  hashCost?: HashCost | undefined;
}

/**
 * rotated_at of a refresh token whose rotation has committed but whose instant is not written yet:
 * until then every presentation of it counts as a lost race, never as reuse.
 */
const ROTATION_PENDING = new Date('9999-12-31T00:00:00Z');

/** last_used_at is written at most this often per session, so reads stay cheap. */
const LAST_USED_RESOLUTION_MS = 60_000;

const USERNAME_INDEX = 'users_username_lower_key';
const EMAIL_INDEX = 'users_email_key';

export class AuthService {
  /** The lookup behind every authenticated request, built once (not per request) and prepared. */
  private readonly sessionByAccessId;

  constructor(private readonly deps: AuthServiceDeps) {
    this.sessionByAccessId = deps.db
      .select({
        sessionId: sessions.id,
        publicId: sessions.publicId,
        accessHash: sessions.accessHash,
        accessExpiresAt: sessions.accessExpiresAt,
        lastUsedAt: sessions.lastUsedAt,
        createdAt: sessions.createdAt,
        reauthenticatedAt: sessions.reauthenticatedAt,
        user: users,
      })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.accessId, sql.placeholder('accessId')))
      .limit(1)
      .prepare('session_by_access_id');
  }

  /** Creates the user and opens its first session. The unique indexes decide races. */
  async register(input: RegisterInput, client: SessionClient): Promise<{ user: User; tokens: TokenSet; sessionPublicId: string }> {
    const { db } = this.deps;
    const email = input.email.toLowerCase();
    // A pre-check for a clear answer without hashing; the unique indexes below remain the source of truth.
    const taken = await db
      .select({ username: users.username, email: users.email })
      .from(users)
      .where(or(sql`lower(${users.username}) = lower(${input.username})`, eq(users.email, email)));
    if (taken.some((u) => u.username.toLowerCase() === input.username.toLowerCase())) throw new AuthError('username_taken');
    if (taken.some((u) => u.email === email)) throw new AuthError('email_taken');

    const passwordHash = await hashPassword(input.password, this.hashing(`client:${client.ip ?? ''}`));
    const now = this.deps.now();
    const opened = this.newSession(sql`new_user.id`, client, now, 'password');
    const { values } = opened;
    // One statement, so atomic without a client-side transaction (see `Db` on why there are none):
    // the user and its first session exist together or not at all.
    const newUser = db.$with('new_user').as(
      db
        .insert(users)
        .values({ username: input.username, email, passwordHash, nickname: input.nickname || input.username, createdAt: now, updatedAt: now })
        .returning(),
    );
    const firstSession = db
      .$with('first_session', { id: sql<number>`id`.as('id') })
      .as(insertSelect(sessions, values, sql`from new_user returning id`));
    try {
      const [user] = await db.with(newUser, firstSession).select().from(newUser);
      return { user: user!, tokens: await this.tokenSet(user!, opened, now), sessionPublicId: opened.publicId };
    } catch (error) {
      const constraint = uniqueViolation(error);
      if (constraint === USERNAME_INDEX) throw new AuthError('username_taken');
      if (constraint === EMAIL_INDEX) throw new AuthError('email_taken');
      throw error;
    }
  }

  /** `account` with an `@` is an e-mail address, otherwise a username; both case-insensitive. */
  async login(account: string, password: string, client: SessionClient): Promise<{ user: User; tokens: TokenSet; sessionPublicId: string }> {
    const user = await this.checkPassword(account, password);
    return this.openSession(user, client, 'password', { passwordHash: user.passwordHash });
  }

  /**
   * What an account name typed at login finds, in one statement: the user, if any, and the key of the
   * name's failure budget. A name that finds a user is keyed by the user's id, so every spelling the
   * lookup accepts shares one budget; any other name by its form as the database folds it (see
   * account-name.ts), so spellings the lookup would equate share one too. AuthError `server_busy`
   * before any query when the name's hashing lane is over its wait bound: a flood is refused cheaply.
   */
  async findAccount(account: string): Promise<FoundAccount> {
    const hashing = this.accountLane(account);
    ensureHashCapacity(hashing);
    const [row] = await this.deps.db
      .select({ folded: foldedAccount(account), user: users })
      .from(sql`(select 1) as one`)
      .leftJoin(users, accountMatches(account))
      .limit(1);
    const user = row?.user ?? undefined;
    return { user, key: user ? userKey(user.id) : accountKey(row!.folded), hashing };
  }

  /**
   * The account's password, verified on the name's hashing lane (an unknown account costs a dummy
   * verification, so timing tells nothing); a ban is checked only after the password verified (a ban
   * reveals nothing to someone who does not have it). Opens nothing. `account`: a name, or what
   * findAccount found for it.
   */
  async checkPassword(account: string | FoundAccount, password: string): Promise<User> {
    const { user, hashing } = typeof account === 'string' ? await this.findAccount(account) : account;
    ensureHashCapacity(hashing);
    if (!user) {
      await verifyAgainstDummy(password, hashing);
      throw new AuthError('no_such_account');
    }
    if (!(await verifyPassword(user.passwordHash, password, hashing))) throw new AuthError('wrong_password');
    assertNotBanned(user, this.deps.now());
    return user;
  }

  /** One hashing lane per account name as typed (case aside), the same whether or not it exists. */
  private accountLane(account: string): HashOptions {
    return this.hashing(`account:${account.toLowerCase()}`);
  }

  /**
   * Opens a session for a user whose identity was proven (`method` says how). With `passwordHash`, the
   * session opens only if that is still the user's password: a password change that committed since it
   * was verified wins, and this fails as if the password were wrong. A ban that committed meanwhile
   * wins as well (it ends every session, this one included).
   */
  async openSession(
    user: User,
    client: SessionClient,
    method: AuthMethod,
    { passwordHash }: { passwordHash?: string } = {},
  ): Promise<{ user: User; tokens: TokenSet; sessionPublicId: string }> {
    const { db } = this.deps;
    const now = this.deps.now();
    // Sessions whose refresh token expired can never be used again; pruning them here keeps the table bounded.
    await db.delete(sessions).where(and(eq(sessions.userId, user.id), lte(sessions.refreshExpiresAt, now)));
    // FOR SHARE makes a password change that is writing wait for this insert, or this insert for the change.
    const session = this.newSession(sql`users.id`, client, now, method);
    const samePassword = passwordHash === undefined ? sql`` : sql` and users.password_hash = ${passwordHash}`;
    const openedSession = db
      .$with('opened_session', { id: sql<number>`id`.as('id') })
      .as(
        insertSelect(
          sessions,
          session.values,
          sql`from users where users.id = ${user.id}${samePassword} and (users.banned_at is null or users.banned_until <= ${now.toISOString()}::timestamptz) for share returning id`,
        ),
      );
    const opened = await db.with(openedSession).select().from(openedSession);
    if (opened.length === 0) {
      const [after] = await db.select().from(users).where(eq(users.id, user.id)).limit(1);
      if (after && (passwordHash === undefined || after.passwordHash === passwordHash)) assertNotBanned(after, now);
      // The password changed (or the user is gone) since it was verified.
      throw new AuthError(passwordHash === undefined ? 'no_such_account' : 'wrong_password');
    }
    return { user, tokens: await this.tokenSet(user, session, now), sessionPublicId: session.publicId };
  }

  /**
   * Rotates the session's token pair: the presented refresh token and its access token stop
   * working at once. A refresh token presented after it was rotated away revokes its session
   * (reuse detection, RFC 9700 §4.14.2). Of concurrent refreshes with one token exactly one wins;
   * the others get invalid_refresh_token and revoke nothing, as does a token presented again within
   * `refreshReuseGraceS` of its rotation.
   * @param presentedAt when the request arrived (taken before any await): compared with the rotation time to tell a lost race from a reuse
   * @param client who presented it, handed to `onRefreshReuse` for the audit rows
   */
  async refresh(refreshToken: string, presentedAt: Date = this.deps.now(), client?: SessionClient): Promise<TokenSet> {
    const { db } = this.deps;
    const parsed = parseToken(refreshToken);
    if (!parsed) throw new AuthError('invalid_refresh_token');
    const now = this.deps.now();

    const [session] = await db
      .select({ id: sessions.id, publicId: sessions.publicId, refreshHash: sessions.refreshHash, refreshExpiresAt: sessions.refreshExpiresAt, user: { id: users.id, roles: users.roles, bannedAt: users.bannedAt, bannedUntil: users.bannedUntil } })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.refreshId, parsed.id))
      .limit(1);
    if (!session) {
      await this.revokeIfReused(parsed.id, parsed.secret, presentedAt, client);
      throw new AuthError('invalid_refresh_token');
    }
    if (!secretMatches(parsed.secret, session.refreshHash)) throw new AuthError('invalid_refresh_token');
    // A ban ends every session; this holds for one that a ban's end could not reach.
    if (isBanned(session.user, now)) throw new AuthError('invalid_refresh_token');
    if (session.refreshExpiresAt.getTime() <= now.getTime()) {
      // The session can never be used again; drop it rather than keep it around.
      await db.delete(sessions).where(and(eq(sessions.id, session.id), eq(sessions.refreshId, parsed.id)));
      throw new AuthError('invalid_refresh_token');
    }

    const access = issueToken();
    const refresh = issueToken();
    // One atomic compare-and-swap on the current refresh id (a concurrent rotation makes it match
    // nothing), recording the rotated-away token in the same statement.
    const swapped = db.$with('swapped').as(
      db
        .update(sessions)
        .set({
          accessId: access.id,
          accessHash: access.digest,
          accessExpiresAt: this.accessExpiry(now),
          refreshId: refresh.id,
          refreshHash: refresh.digest,
          refreshExpiresAt: this.refreshExpiry(now),
          lastUsedAt: now,
        })
        .where(and(eq(sessions.id, session.id), eq(sessions.refreshId, parsed.id), gt(sessions.refreshExpiresAt, now)))
        .returning({ id: sessions.id }),
    );
    const recorded = db.$with('recorded', { refreshId: sql<string>`refresh_id`.as('refresh_id') }).as(
      insertSelect(
        rotatedRefreshTokens,
        { refreshId: parsed.id, refreshHash: session.refreshHash, sessionId: sql`swapped.id`, rotatedAt: ROTATION_PENDING },
        sql`from swapped returning refresh_id`,
      ),
    );
    const rotated = await db.with(swapped, recorded).select().from(recorded);
    // Lost a race against a concurrent refresh with the same token: not reuse, so no revocation.
    if (rotated.length === 0) throw new AuthError('invalid_refresh_token');
    // Taken after the swap committed: any presentation that began before this instant was concurrent with it.
    const rotatedAt = this.deps.now();
    const expiredBefore = new Date(rotatedAt.getTime() - this.deps.refreshTokenTtl * 1000);
    // The same statement forgets this session's rotated tokens that have expired by now anyway (each
    // was issued before its rotation, so it expired by rotated_at + the refresh lifetime): reuse
    // detection gains nothing from them, and a session refreshed for months keeps a bounded history.
    const expired = db.$with('expired').as(
      db
        .delete(rotatedRefreshTokens)
        .where(and(eq(rotatedRefreshTokens.sessionId, session.id), lt(rotatedRefreshTokens.rotatedAt, expiredBefore)))
        .returning({ refreshId: rotatedRefreshTokens.refreshId }),
    );
    await db
      .with(expired)
      .update(rotatedRefreshTokens)
      .set({ rotatedAt })
      .where(eq(rotatedRefreshTokens.refreshId, parsed.id))
      .catch((error: unknown) => {
        // The rotation stands and the new pair is valid; this old token only keeps counting as a lost race.
        this.deps.logger.warn({ err: error, sessionId: session.id }, 'could not record the rotation instant of a refresh token');
      });
    return this.tokenSet(session.user, { access, refresh, publicId: session.publicId }, now);
  }

  /**
   * The session and user behind an access token, or AuthError `invalid_access_token`: a JWT we signed
   * whose session still holds it, or an opaque token of the previous release until it expires.
   */
  async authenticate(accessToken: string): Promise<Authenticated> {
    const { db } = this.deps;
    const { row, now } = await this.sessionOf(accessToken);

    if (now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await db
        .update(sessions)
        .set({ lastUsedAt: now })
        .where(and(eq(sessions.id, row.sessionId), lt(sessions.lastUsedAt, new Date(now.getTime() - LAST_USED_RESOLUTION_MS))));
    }
    const authenticatedAt = row.reauthenticatedAt && row.reauthenticatedAt > row.createdAt ? row.reauthenticatedAt : row.createdAt;
    return { sessionId: row.sessionId, sessionPublicId: row.publicId, user: row.user, expiresAt: row.accessExpiresAt, authenticatedAt };
  }

  /**
   * Introspection (RFC 7662): what an active access token stands for, or undefined for any other
   * token (unknown, expired, revoked, malformed). Writes nothing.
   */
  async introspect(accessToken: string): Promise<ActiveToken | undefined> {
    try {
      const { row, claims } = await this.sessionOf(accessToken);
      const exp = claims?.exp ?? Math.floor(row.accessExpiresAt.getTime() / 1000);
      return {
        sub: String(row.user.id),
        sid: row.publicId,
        username: row.user.username,
        roles: row.user.roles,
        // An opaque token of the previous release carries no issue time: its expiry less the lifetime.
        iat: claims?.iat ?? exp - this.deps.accessTokenTtl,
        exp,
      };
    } catch (error) {
      if (error instanceof AuthError) return undefined;
      throw error;
    }
  }

  /** The session row an access token belongs to, checked; AuthError `invalid_access_token` otherwise. */
  private async sessionOf(accessToken: string) {
    if (looksLikeJwt(accessToken)) {
      const claims = await this.deps.accessTokens.verify(accessToken);
      const [row] = await this.sessionByAccessId.execute({ accessId: claims.jti });
      // The session must still hold this token: a refresh, a logout or a revocation ends it at once here.
      if (!row || row.publicId !== claims.sid || String(row.user.id) !== claims.sub) throw new AuthError('invalid_access_token');
      const now = this.deps.now();
      if (row.accessExpiresAt.getTime() <= now.getTime()) throw new AuthError('invalid_access_token');
      return { row, now, claims };
    }
    // An opaque `<id>.<secret>` access token issued before the upgrade: valid until it expires.
    const parsed = parseToken(accessToken);
    if (!parsed) throw new AuthError('invalid_access_token');
    const [row] = await this.sessionByAccessId.execute({ accessId: parsed.id });
    if (!row || !secretMatches(parsed.secret, row.accessHash)) throw new AuthError('invalid_access_token');
    const now = this.deps.now();
    if (row.accessExpiresAt.getTime() <= now.getTime()) throw new AuthError('invalid_access_token');
    return { row, now, claims: undefined };
  }

  /** The token set of a session: the access token signed (jti: its access id), the refresh token opaque. */
  private async tokenSet(
    user: Pick<User, 'id' | 'roles'>,
    session: { access: IssuedToken; refresh: IssuedToken; publicId: string },
    now: Date,
  ): Promise<TokenSet> {
    const accessToken = await this.deps.accessTokens.sign({ sub: String(user.id), sid: session.publicId, jti: session.access.id, roles: user.roles }, now);
    return { accessToken, refreshToken: session.refresh.token, expiresIn: this.deps.accessTokenTtl };
  }

  /** Deletes the session; its access and refresh tokens are dead from now on. */
  async logout(sessionId: number): Promise<void> {
    await this.deps.db.delete(sessions).where(eq(sessions.id, sessionId));
  }

  /** Changes only the fields given; returns the whole user as stored afterwards. */
  async updateProfile(userId: number, changes: ProfileChanges): Promise<User> {
    const { db } = this.deps;
    const set = {
      ...(changes.nickname !== undefined && { nickname: changes.nickname }),
      ...(changes.avatar !== undefined && { avatar: changes.avatar }),
      ...(changes.gender !== undefined && { gender: changes.gender }),
      ...(changes.phone !== undefined && { phone: changes.phone }),
    };
    const [user] =
      Object.keys(set).length === 0
        ? await db.select().from(users).where(eq(users.id, userId)).limit(1)
        : await db
            .update(users)
            .set({ ...set, updatedAt: this.deps.now() })
            .where(eq(users.id, userId))
            .returning();
    // The session was valid a moment ago; a user deleted in between reads as a dead token.
    if (!user) throw new AuthError('invalid_access_token');
    return user;
  }

  /**
   * The one re-check of an authenticated user's password (account deletion, password and e-mail
   * change, turning TOTP off, re-authentication): on the user's own hashing lane with the wait bound
   * of logins, refused `server_busy` before any database work when that bound would be passed.
   * Returns the hash it verified, for statements conditional on it (a change that committed
   * meanwhile wins); AuthError `wrong_old_password` (2003, 403) when wrong.
   */
  async confirmPassword(userId: number, password: string): Promise<string> {
    const hashing = this.hashing(`user:${userId}`);
    ensureHashCapacity(hashing);
    const [current] = await this.deps.db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId)).limit(1);
    // The session was valid a moment ago; a user deleted in between reads as a dead token.
    if (!current) throw new AuthError('invalid_access_token');
    if (!(await verifyPassword(current.passwordHash, password, hashing))) throw new AuthError('wrong_old_password');
    return current.passwordHash;
  }

  /**
   * Stores a new password in place of `verifiedHash` (the one confirmPassword verified) and revokes
   * every other session of the user; the caller's session stays. The swap is conditional on that
   * hash, so of two concurrent changes with the same old password only one succeeds.
   */
  async changePassword(auth: Authenticated, verifiedHash: string, newPassword: string): Promise<void> {
    const { db } = this.deps;
    const userId = auth.user.id;
    const current = { passwordHash: verifiedHash };
    // Hashed outside the transaction: argon2 is slow on purpose and must not hold a connection.
    const passwordHash = await hashPassword(newPassword, this.hashing(`user:${userId}`));
    const now = this.deps.now();
    // One statement: the new hash (only if the verified one is still current) and the end of every
    // other session. The number of the last session opened when the change took the user's row
    // bounds the clean-up below.
    const changed = db.$with('changed').as(
      db
        .update(users)
        .set({ passwordHash, updatedAt: now })
        .where(and(eq(users.id, userId), eq(users.passwordHash, current.passwordHash)))
        .returning({ id: users.id }),
    );
    const ended = db.$with('ended').as(
      db
        .delete(sessions)
        .where(and(inArray(sessions.userId, db.select({ id: changed.id }).from(changed)), ne(sessions.id, auth.sessionId)))
        .returning({ id: sessions.id }),
    );
    const [row] = await db
      .with(changed, ended)
      .select({
        // Evaluated per row of `changed`, so after the update holds the row lock (not at statement start).
        lastSessionId: sql<string | number | null>`case when ${changed.id} is not null then pg_sequence_last_value(pg_get_serial_sequence('sessions', 'id')::regclass) end`,
      })
      .from(changed);
    if (!row) throw new AuthError('wrong_old_password');
    // A login that verified the old password and inserted its session while this change waited for
    // the row lock committed after the statement above took its snapshot, so its session escaped the
    // delete. Its id is at most lastSessionId; sessions opened with the new password come after.
    if (row.lastSessionId !== null) {
      await db
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), ne(sessions.id, auth.sessionId), lte(sessions.id, Number(row.lastSessionId))))
        .catch((error: unknown) => {
          this.deps.logger.error({ err: error, userId }, 'password changed, but sessions opened during the change could not be ended');
        });
    }
  }

  /**
   * A new session's token parts and its row for `insertSelect`; `userId` is an expression of the
   * select. The access token's secret is never given out (the JWT refers to the row by its id); its
   * digest fills the column opaque tokens of the previous release are checked against.
   */
  private newSession(userId: SQL, client: SessionClient, now: Date, authMethod: AuthMethod): { access: IssuedToken; refresh: IssuedToken; publicId: string; values: Record<string, unknown> } {
    const access = issueToken();
    const refresh = issueToken();
    const publicId = randomUUID();
    const values = {
      userId,
      accessId: access.id,
      accessHash: access.digest,
      accessExpiresAt: this.accessExpiry(now),
      refreshId: refresh.id,
      refreshHash: refresh.digest,
      refreshExpiresAt: this.refreshExpiry(now),
      createdAt: now,
      lastUsedAt: now,
      ip: client.ip ?? null,
      userAgent: client.userAgent ?? null,
      publicId,
      authMethod,
      reauthenticatedAt: null,
    } satisfies Record<Extract<keyof typeof sessions.$inferInsert, string>, unknown> & { userId: SQL };
    return { access, refresh, publicId, values };
  }

  /**
   * A rotated refresh token presented again means it leaked: end the session it belonged to.
   * A presentation that began before the rotation, or at the same millisecond, is a concurrent
   * request that lost the race (its lookup merely ran after the winner committed), not a reuse; so
   * is one within the grace period after the rotation (RFC 9700 §4.14.2 allows one): a client whose
   * two tabs refreshed a moment apart, or that retried after a lost answer, keeps its session.
   */
  private async revokeIfReused(refreshId: string, secret: string, presentedAt: Date, client: SessionClient | undefined): Promise<void> {
    const { db, logger } = this.deps;
    const [rotated] = await db
      .select({
        sessionId: rotatedRefreshTokens.sessionId,
        refreshHash: rotatedRefreshTokens.refreshHash,
        rotatedAt: rotatedRefreshTokens.rotatedAt,
      })
      .from(rotatedRefreshTokens)
      .where(eq(rotatedRefreshTokens.refreshId, refreshId))
      .limit(1);
    if (!rotated || !secretMatches(secret, rotated.refreshHash)) return;
    const sinceRotationMs = presentedAt.getTime() - rotated.rotatedAt.getTime();
    if (sinceRotationMs <= 0 || sinceRotationMs < (this.deps.refreshReuseGraceS ?? 0) * 1000) return;
    const [revoked] = await db
      .delete(sessions)
      .where(eq(sessions.id, rotated.sessionId))
      .returning({ id: sessions.id, userId: sessions.userId, publicId: sessions.publicId });
    if (revoked) {
      logger.warn({ sessionId: revoked.id, userId: revoked.userId }, 'rotated refresh token presented again; session revoked');
      this.deps.onRefreshReuse?.({ userId: revoked.userId, sessionPublicId: revoked.publicId }, client);
    }
  }

  private hashing(lane: string): HashOptions {
    return { lane, maxWaitMs: this.deps.hashMaxWaitMs ?? 2000, cost: this.deps.hashCost };
  }

  private accessExpiry(now: Date): Date {
    return new Date(now.getTime() + this.deps.accessTokenTtl * 1000);
  }

  private refreshExpiry(now: Date): Date {
    return new Date(now.getTime() + this.deps.refreshTokenTtl * 1000);
  }
}

/** Whether the user is banned at `now`: banned_at set and no end, or an end still ahead. */
export function isBanned(user: Pick<User, 'bannedAt' | 'bannedUntil'>, now: Date): boolean {
  return user.bannedAt !== null && (user.bannedUntil === null || user.bannedUntil.getTime() > now.getTime());
}

/** AuthError `account_banned` (2006, 403) with `until` in its data when the user is banned. */
/** AuthError `account_banned` (2006, with `until`) when the user is banned at `now`. */
export function assertNotBanned(user: Pick<User, 'bannedAt' | 'bannedUntil'>, now: Date): void {
  if (isBanned(user, now)) throw new AuthError('account_banned', undefined, undefined, { until: user.bannedUntil ? formatTime(user.bannedUntil) : null });
}

/** The violated unique constraint's name, for PostgreSQL error 23505 from either driver (drizzle wraps it in `cause`). */
export function uniqueViolation(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const candidate = e as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (candidate.code === '23505') {
      const name = candidate.constraint_name ?? candidate.constraint;
      return typeof name === 'string' ? name : '';
    }
  }
  return undefined;
}

/**
 * `insert into <table> (<columns>) select <values> <tail>`, listing every column but the identity
 * (drizzle's own insert…select lists that too). Each value is cast to its column's type, since a
 * parameter in a select list has none.
 */
export function insertSelect<T extends PgTable>(table: T, values: Record<string, unknown>, tail: SQL): SQL {
  const columns = Object.entries(getTableColumns(table)).filter(([, column]) => column.generatedIdentity === undefined);
  const names = columns.map(([, column]) => sql.identifier(column.name));
  const row = columns.map(([key, column]) => {
    if (!(key in values)) throw new Error(`insertSelect: no value for ${key}`);
    const value = values[key];
    if (is(value, SQL)) return value;
    if (value === null) return sql`null::${sql.raw(column.getSQLType())}`;
    return sql`${sql.param(value, column)}::${sql.raw(column.getSQLType())}`;
  });
  return sql`insert into ${table} (${sql.join(names, sql`, `)}) select ${sql.join(row, sql`, `)} ${tail}`;
}
