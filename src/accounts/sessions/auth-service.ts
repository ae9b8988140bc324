// The account service: users, sessions and their tokens. Knows nothing of HTTP.
import { randomUUID } from 'node:crypto';
import { and, eq, gt, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import { rotatedRefreshTokens, sessions, users } from '../../db/schema.js';
import { insertSelect, uniqueViolation } from '../../db/sql.js';
import type { ActiveToken, Authenticated, FoundAccount, SessionClient, TokenSet, User } from '../types.js';
import { assertNotBanned, isBanned } from '../shared/bans.js';
import { looksLikeJwt } from './access-tokens.js';
import { accountMatches, foldedAccount } from '../shared/account-name.js';
import type { AuthMethod } from '../devices/contract.js';
import { AuthError } from '../shared/auth-error.js';
import { accountKey, userKey } from '../shared/login-guard.js';
import { ensureHashCapacity, hashPassword, verifyAgainstDummy, verifyPassword, type HashOptions } from '../passwords.js';
import { revokeIfReused } from './refresh-reuse.js';
import type { AuthServiceDeps, RegisterInput } from './auth-deps.js';
import { issueToken, parseToken, secretMatches, type IssuedToken } from './tokens.js';

/**
 * rotated_at of a refresh token whose rotation has committed but whose instant is not written yet:
 * until then every presentation of it counts as a lost race, never as reuse.
 */
const ROTATION_PENDING = new Date('9999-12-31T00:00:00Z');

/** last_used_at is written at most this often per session, so reads stay cheap. */
const LAST_USED_RESOLUTION_MS = 60_000;

const USERNAME_INDEX = 'users_username_lower_key';
const EMAIL_INDEX = 'users_email_key';

export type { AuthServiceDeps, RegisterInput } from './auth-deps.js';

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
      await revokeIfReused(this.deps, parsed.id, parsed.secret, presentedAt, client);
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

  /** The argon2 options of a hashing lane, with the wait bound of logins. */
  hashing(lane: string): HashOptions {
    return { lane, maxWaitMs: this.deps.hashMaxWaitMs ?? 2000, cost: this.deps.hashCost };
  }

  private accessExpiry(now: Date): Date {
    return new Date(now.getTime() + this.deps.accessTokenTtl * 1000);
  }

  private refreshExpiry(now: Date): Date {
    return new Date(now.getTime() + this.deps.refreshTokenTtl * 1000);
  }
}
