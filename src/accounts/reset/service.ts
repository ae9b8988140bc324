// Forgotten password: a 6-digit one-time code by e-mail, then a new password with it. The answer to
// a request is the same, in the same time, whether or not the e-mail is registered; nobody but the
// owner can keep the owner from receiving a working code (docs/account-api.md, "Who can block a
// password reset"). Knows nothing of HTTP.
import { PASSWORD_RESET_FACTORS_REMOVED } from './mail.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, count, desc, eq, gt, gte, inArray, isNotNull, isNull, lte, type SQL, sql } from 'drizzle-orm';
import type { Store } from 'hono-rate-limiter';
import type { Db } from '../../db/client.js';
import { authEvents, passwordResetCodes, sessions, users } from '../../db/schema.js';
import { addressKey, UNKNOWN_CLIENT } from '../../http/rate-limit.js';
import type { Logger } from '../../logger.js';
import type { MailSlot, Mailer } from '../../mail/mailer.js';
import type { NoticeThrottle } from '../../mail/notice-throttle.js';
import type { AuthKeys } from '../../secrets/auth-key.js';
import { normaliseAccount, type AuditLog } from '../audit/log.js';
import { Budget } from '../shared/budget.js';
import { AuthError } from '../shared/auth-error.js';
import { accountKey } from '../shared/login-guard.js';
import { hashPassword, SHARED, type HashCost } from '../passwords.js';
import { assertAcceptablePassword } from '../shared/password-policy.js';
import { removalDetail, secondFactorRemovals, type FactorRemoval } from '../shared/second-factors.js';
import type { AddressProof } from '../shared/address-proof.js';
import { assertNotBanned } from '../shared/bans.js';
import { ONE_TIME_CODE_MAX_FAILURES, ONE_TIME_CODE_TTL_MS, OneTimeCodes } from '../shared/one-time-code.js';

export const RESET_CODE_TTL_MS = ONE_TIME_CODE_TTL_MS;
/** Wrong tries a code takes from the address that asked for it, and again from all others together. */
export const RESET_CODE_MAX_FAILURES = ONE_TIME_CODE_MAX_FAILURES;
/** Codes mailed per account and hour to addresses it has not signed in from (a bound on mail to a victim). */
export const RESET_CODES_PER_HOUR = 10;
/** Forgot requests per client address, e-mail address and hour. */
export const RESET_REQUESTS_PER_ADDRESS = 3;
/** A client address the account signed in from within this many days is its owner's: never capped. */
export const RESET_KNOWN_ADDRESS_DAYS = 30;
const HOUR_MS = 60 * 60 * 1000;
/**
 * A forgot-password request is answered no sooner than this after it arrived, whatever happened:
 * the work for a known and an unknown e-mail differs by a few queries, which the padding hides.
 */
export const FORGOT_ANSWER_MS = 250;

export interface RequestClient {
  ip?: string | undefined;
  userAgent?: string | undefined;
}

/** Where the per-client budgets count (rate-limit stores: memory, or Redis shared by every instance). */
export interface ResetBudgets {
  /** Forgot requests per client address and hour (RESET_REQUESTS_PER_ADDRESS of them per e-mail); 0: off. */
  requestsPerSource: number;
  /** Wrong codes per client address and hour; 0: off. */
  guessesPerSource: number;
  stores: { requests: Store; requestsPerAddress: Store; guesses: Store };
}

/** Reset codes: `<user id>:<code>` digested under the `reset-code-digest` subkey. */
const RESET_CODE_DIGEST = 'reset-code-digest';

/**
 * SHA-256 (hex) of a password hash, in SQL. A code stores that of its user's hash when issued
 * (password_tag) and lives only while it still equals that of the current hash, so a password change
 * or a completed reset ends every outstanding code without touching their rows.
 */
function passwordTagOf(passwordHash: SQL | typeof users.passwordHash): SQL<string> {
  return sql<string>`encode(sha256(convert_to(${passwordHash}, 'UTF8')), 'hex')`;
}

/** The tag of the current password of a code's user, inside a statement on password_reset_codes. */
const CURRENT_PASSWORD_TAG = sql`(select ${passwordTagOf(users.passwordHash)} from ${users} where ${users.id} = ${passwordResetCodes.userId})`;

/** The client's budget key: its address as the rate limits key it (IPv6 by /64). */
function sourceOf(client: RequestClient): string {
  return client.ip === undefined ? UNKNOWN_CLIENT : addressKey(client.ip);
}

export class PasswordReset {
  private readonly requests: Budget;
  private readonly requestsPerAddress: Budget;
  private readonly guesses: Budget;

  constructor(
    private readonly deps: {
      db: Db;
      now: () => Date;
      logger: Logger;
      mailer: Mailer;
      /** Where the "password changed" notice of a completed reset goes (limited per account and recipient). */
      notices: NoticeThrottle;
      audit: AuditLog;
      keys: AuthKeys;
      budgets: ResetBudgets;
      /** The second factors a reset of an address never proved removes. */
      factors: readonly FactorRemoval[];
      /** How the proof of the address is kept: a completed reset records it (its code came to the address). */
      addressProof: AddressProof;
      answerMs?: number;
      /** argon2id's cost of the new password's hash; the production parameters when absent. */
      hashCost?: HashCost | undefined;
    },
  ) {
    const { budgets } = deps;
    this.requests = new Budget({ store: budgets.stores.requests, limit: budgets.requestsPerSource, windowMs: HOUR_MS });
    this.requestsPerAddress = new Budget({
      store: budgets.stores.requestsPerAddress,
      limit: budgets.requestsPerSource === 0 ? 0 : Math.min(RESET_REQUESTS_PER_ADDRESS, budgets.requestsPerSource),
      windowMs: HOUR_MS,
    });
    this.guesses = new Budget({ store: budgets.stores.guesses, limit: budgets.guessesPerSource, windowMs: HOUR_MS });
  }

  /**
   * Issues a code for a registered e-mail and queues the message. AuthError `source_throttled` when
   * the client's budget is spent, `mail_busy` when the code queue is full: both decided before the
   * e-mail is looked up. Resolves or rejects no sooner than FORGOT_ANSWER_MS after the call, the same
   * way for any e-mail.
   */
  async request(email: string, client: RequestClient): Promise<void> {
    const started = performance.now();
    try {
      const source = sourceOf(client);
      const sourceAndEmail = `${source} ${accountKey(email)}`;
      const [overAll, overAddress] = await Promise.all([this.requests.spend([source]), this.requestsPerAddress.spend([sourceAndEmail])]);
      const retryAfterS = Math.max(overAll ?? 0, overAddress ?? 0);
      if (retryAfterS > 0) throw new AuthError('source_throttled', 'too many password reset requests from this address, retry later', retryAfterS);
      // A place in the code queue before the address is looked up: when there is none, every address
      // is told so alike, and a code is never issued only to be dropped.
      const slot = this.deps.mailer.reserve('code');
      if (!slot) {
        await Promise.all([this.requests.giveBack([source]), this.requestsPerAddress.giveBack([sourceAndEmail])]);
        this.deps.logger.warn({ pending: this.deps.mailer.pending() }, 'mail code queue full: password reset request refused (503)');
        throw new AuthError('mail_busy', undefined, this.deps.mailer.retryAfterS());
      }
      try {
        await this.issue(email, client, source, slot);
      } finally {
        slot.release();
      }
    } finally {
      const wait = (this.deps.answerMs ?? FORGOT_ANSWER_MS) - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
  }

  private async issue(email: string, client: RequestClient, source: string, slot: MailSlot): Promise<void> {
    const { db, audit, keys } = this.deps;
    const now = this.deps.now();
    const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email)).limit(1);
    if (!user) {
      await audit.record({ type: 'password_reset_requested', account: email, detail: 'unknown_email', ip: client.ip, userAgent: client.userAgent });
      return;
    }
    const [recent] = await db
      .select({ n: count() })
      .from(passwordResetCodes)
      .where(and(eq(passwordResetCodes.userId, user.id), gt(passwordResetCodes.createdAt, new Date(now.getTime() - HOUR_MS))));
    if ((recent?.n ?? 0) >= RESET_CODES_PER_HOUR && !(await this.signedInFrom(user.id, client, now))) {
      await audit.record({ type: 'password_reset_requested', userId: user.id, detail: 'hourly_limit', ip: client.ip, userAgent: client.userAgent });
      return;
    }
    const { code, digest, expiresAt } = new OneTimeCodes(keys, RESET_CODE_DIGEST).issue(String(user.id), now);
    // Earlier codes stay valid: a code asked for by someone else must not replace the owner's.
    await db.insert(passwordResetCodes).values({
      userId: user.id,
      codeHash: digest,
      requestedBy: keys.digest('client-address-digest', source),
      // The password this code can replace: when it changes, by any path, the code is dead.
      passwordTag: sql`(select ${passwordTagOf(users.passwordHash)} from ${users} where ${users.id} = ${user.id})`,
      createdAt: now,
      expiresAt,
    });
    await audit.record({ type: 'password_reset_requested', userId: user.id, detail: 'code_sent', ip: client.ip, userAgent: client.userAgent });
    slot.send({
      to: user.email,
      subject: 'Your password reset code',
      text: [
        'Someone asked to reset the password of your chat account.',
        '',
        `Your code: ${code}`,
        '',
        'It is valid for 15 minutes. If you did not ask for it, ignore this message: your password stays as it is.',
      ].join('\n'),
    });
  }

  /**
   * Whether the account registered, logged in, or changed or reset its password from the client's
   * address (its rate-limit key: IPv6 by /64) within RESET_KNOWN_ADDRESS_DAYS: the owner, most likely.
   * Read from the audit trail, the newest 100 such events.
   */
  private async signedInFrom(userId: number, client: RequestClient, now: Date): Promise<boolean> {
    if (client.ip === undefined) return false;
    const rows = await this.deps.db
      .select({ ip: authEvents.ip })
      .from(authEvents)
      .where(
        and(
          eq(authEvents.userId, userId),
          inArray(authEvents.type, ['registered', 'login_succeeded', 'password_changed', 'password_reset']),
          gte(authEvents.occurredAt, new Date(now.getTime() - RESET_KNOWN_ADDRESS_DAYS * 86_400_000)),
          isNotNull(authEvents.ip),
        ),
      )
      .orderBy(desc(authEvents.id))
      .limit(100);
    const source = addressKey(client.ip);
    return rows.some((row) => row.ip !== null && addressKey(row.ip) === source);
  }

  /**
   * Sets a new password with a code: AuthError `invalid_reset_code` (2005) for an unknown e-mail, a
   * wrong, used, revoked or expired code, or one whose tries are spent; `source_throttled` (before
   * anything is looked up) when the client has had its budget of wrong codes. Ends every session of
   * the user.
   */
  async reset(email: string, code: string, newPassword: string, client: RequestClient): Promise<void> {
    const source = sourceOf(client);
    // Counted before the attempt (concurrent guesses cannot slip past), given back unless it failed
    // as a wrong code.
    const retryAfterS = await this.guesses.spend([source]);
    if (retryAfterS !== undefined) throw new AuthError('source_throttled', 'too many wrong reset codes from this address, retry later', retryAfterS);
    try {
      await this.resetWithCode(email, code, newPassword, client, source);
    } catch (error) {
      if (!(error instanceof AuthError && error.reason === 'invalid_reset_code')) await this.guesses.giveBack([source]);
      throw error;
    }
    await this.guesses.giveBack([source]);
  }

  private async resetWithCode(email: string, code: string, newPassword: string, client: RequestClient, source: string): Promise<void> {
    const { db, audit, addressProof } = this.deps;
    const now = this.deps.now();
    /**
     * A failed code, audited like a failed login. Only attempts that got this far (past the client's
     * budget of wrong codes) are written, so the rows per client address stay bounded.
     */
    const failed = async (detail: 'unknown_email' | 'no_live_code' | 'wrong_code' | 'code_used' | 'account_banned', userId?: number) => {
      await audit.record({ type: 'password_reset_failed', userId, account: userId === undefined ? normaliseAccount(email) : undefined, detail, ip: client.ip, userAgent: client.userAgent });
      return new AuthError('invalid_reset_code');
    };
    const [user] = await db
      .select({ id: users.id, username: users.username, email: users.email, addressProved: addressProof.proved(), bannedAt: users.bannedAt, bannedUntil: users.bannedUntil })
      .from(users)
      .where(eq(users.email, email))
      .limit(1);
    if (!user) throw await failed('unknown_email');
    // The try is counted before anything is compared, by one conditional statement per code: of any
    // number of concurrent guesses at most RESET_CODE_MAX_FAILURES get a code's row back, so at most
    // that many are ever compared with it (a select, a compare and an increment let 41 racing guesses
    // through). It counts on every live code of the user: on the requester's tries of a code asked
    // for from this address, on the others' tries of the rest, so guesses from elsewhere never spend
    // the tries of the address that asked. One row per statement: a statement never holds one code's
    // lock while it waits for another's, so concurrent guesses cannot deadlock.
    const tries = this.triesOf(source);
    const live = and(isNull(passwordResetCodes.usedAt), gt(passwordResetCodes.expiresAt, now), sql`${passwordResetCodes.passwordTag} = ${CURRENT_PASSWORD_TAG}`);
    const candidates = await db
      .select({ id: passwordResetCodes.id })
      .from(passwordResetCodes)
      .where(and(eq(passwordResetCodes.userId, user.id), live))
      .orderBy(passwordResetCodes.id);
    const tried: Array<{ id: number; codeHash: string }> = [];
    for (const candidate of candidates) {
      const [row] = await db
        .update(passwordResetCodes)
        .set({
          failedAttempts: sql`${passwordResetCodes.failedAttempts} + case when ${tries.mine} then 0 else 1 end`,
          requesterFailedAttempts: sql`${passwordResetCodes.requesterFailedAttempts} + case when ${tries.mine} then 1 else 0 end`,
        })
        .where(and(eq(passwordResetCodes.id, candidate.id), live, sql`${tries.count} < ${RESET_CODE_MAX_FAILURES}`))
        .returning({ id: passwordResetCodes.id, codeHash: passwordResetCodes.codeHash });
      if (row) tried.push(row);
    }
    const current = tried.find((row) => new OneTimeCodes(this.deps.keys, RESET_CODE_DIGEST).matches(String(user.id), code, row.codeHash));
    if (!current) throw await failed(tried.length === 0 ? 'no_live_code' : 'wrong_code', user.id);
    // Like every way of signing in, a banned account is refused once the proof checked (the ban is
    // told only to the holder of a right code): nothing is set, the code and its try stay.
    try {
      assertNotBanned(user, now);
    } catch (error) {
      await this.giveBack(tried.map((row) => row.id), source);
      await failed('account_banned', user.id);
      throw error;
    }
    // A refused new password (or a failed hash) uses up neither the code nor the try: the user may
    // send another password.
    let passwordHash: string;
    try {
      assertAcceptablePassword('new_password', newPassword, user);
      passwordHash = await hashPassword(newPassword, { ...SHARED, cost: this.deps.hashCost });
    } catch (error) {
      await this.giveBack(tried.map((row) => row.id), source);
      throw error;
    }
    const at = this.deps.now();
    // One statement: the code is used (only if still usable: of two concurrent resets one wins) and
    // the password set (only if it is still the one the code was issued for), and every session
    // ended. The new password hash kills every other outstanding code (their password_tag no longer
    // matches): nothing to revoke row by row.
    const used = db.$with('used').as(
      db
        .update(passwordResetCodes)
        .set({ usedAt: at })
        .where(
          // No try limit here: this guess was counted within it before it was compared.
          and(
            eq(passwordResetCodes.id, current.id),
            isNull(passwordResetCodes.usedAt),
            gt(passwordResetCodes.expiresAt, at),
            sql`${passwordResetCodes.passwordTag} = ${CURRENT_PASSWORD_TAG}`,
          ),
        )
        .returning({ userId: passwordResetCodes.userId, passwordTag: passwordResetCodes.passwordTag }),
    );
    // A password change committed meanwhile: the user's row is read again once its lock is free, the
    // tag no longer matches, and nothing is changed (the code is dead anyway).
    const changed = db.$with('changed').as(
      db
        .update(users)
        // The code came to this address: it is proved.
        .set({ passwordHash, updatedAt: at, ...addressProof.record(at) })
        .where(sql`(${users.id}, ${passwordTagOf(users.passwordHash)}) in (select user_id, password_tag from used)`)
        .returning({ id: users.id }),
    );
    const ended = db.$with('ended').as(
      db
        .delete(sessions)
        .where(sql`${sessions.userId} in (select id from changed)`)
        .returning({ publicId: sessions.publicId }),
    );
    // An address not verified before this reset was never proved by whoever held the account until
    // now: every sign-in factor they may have added goes (passkeys, TOTP and its recovery codes, open
    // second steps). Every part of a statement reads the rows as they were before it, so this sees
    // the proof as it was before `changed` records it.
    const unproved = sql`${users.id} in (select id from changed) and not (${addressProof.proved()})`;
    const unprovedUser = sql`(select ${users.id} from ${users} where ${unproved})`;
    const removals = secondFactorRemovals(db, (userId) => sql`${userId} in ${unprovedUser}`, this.deps.factors);
    const rows = await db
      .with(used, changed, ended, ...removals.ctes)
      .select({
        removed: removals.counts,
        publicId: sql<string | null>`(select string_agg(public_id::text, ',') from ended)`,
        lastSessionId: sql<string | number | null>`pg_sequence_last_value(pg_get_serial_sequence('sessions', 'id')::regclass)`,
      })
      .from(changed);
    const [row] = rows;
    // Another reset with the same code won the race, or the code expired meanwhile.
    if (!row) throw await failed('code_used', user.id);
    // A login that verified the old password while this statement waited for the user's row may have
    // inserted its session after the snapshot above; it is older than lastSessionId. End it too.
    if (row.lastSessionId !== null) {
      await db
        .delete(sessions)
        .where(and(eq(sessions.userId, user.id), lte(sessions.id, Number(row.lastSessionId))))
        .catch((error: unknown) => this.deps.logger.error({ err: error, userId: user.id }, 'password reset, but sessions opened during it could not be ended'));
    }
    const endedIds = row.publicId ? row.publicId.split(',') : [];
    const factorsRemoved = Object.values(row.removed).some((count) => count > 0);
    await audit.record(
      ...endedIds.map((id) => ({ type: 'session_ended' as const, userId: user.id, sessionId: id, detail: 'password_reset', ip: client.ip, userAgent: client.userAgent })),
      { type: 'password_reset', userId: user.id, ip: client.ip, userAgent: client.userAgent },
      ...(user.addressProved ? [] : [{ ...addressProof.audited('password_reset'), userId: user.id, ip: client.ip, userAgent: client.userAgent }]),
      ...(factorsRemoved
        ? [{ type: 'mfa_cleared' as const, userId: user.id, detail: `password_reset: ${removalDetail(this.deps.factors, row.removed)}`, ip: client.ip, userAgent: client.userAgent }]
        : []),
    );
    this.deps.notices.notify({ kind: factorsRemoved ? PASSWORD_RESET_FACTORS_REMOVED : 'password_changed', account: String(user.id), to: user.email, at });
  }

  /** Whether a code was asked for from `source`, and the count of tries that applies to a guess from it. */
  private triesOf(source: string): { mine: SQL; count: SQL } {
    const mine = sql`coalesce(${passwordResetCodes.requestedBy} = ${this.deps.keys.digest('client-address-digest', source)}, false)`;
    return { mine, count: sql`case when ${mine} then ${passwordResetCodes.requesterFailedAttempts} else ${passwordResetCodes.failedAttempts} end` };
  }

  /** Tries that turned out not to be wrong guesses; one row per statement, as they were counted. */
  private async giveBack(ids: number[], source: string): Promise<void> {
    const { mine } = this.triesOf(source);
    for (const id of ids) {
      await this.deps.db
        .update(passwordResetCodes)
        .set({
          failedAttempts: sql`greatest(${passwordResetCodes.failedAttempts} - case when ${mine} then 0 else 1 end, 0)`,
          requesterFailedAttempts: sql`greatest(${passwordResetCodes.requesterFailedAttempts} - case when ${mine} then 1 else 0 end, 0)`,
        })
        .where(eq(passwordResetCodes.id, id));
    }
  }
}
