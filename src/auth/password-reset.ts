// Forgotten password: a 6-digit one-time code by e-mail, then a new password with it. The answer to
// a request is the same, in the same time, whether or not the e-mail is registered. Knows nothing of HTTP.
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, count, eq, gt, inArray, isNull, lt, lte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { passwordResetCodes, sessions, users } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { AuthKeys } from '../secrets/auth-key.js';
import type { AuditLog } from './audit.js';
import { AuthError } from './errors.js';
import { hashPassword } from './passwords.js';
import { assertAcceptablePassword } from './password-policy.js';

export const RESET_CODE_TTL_MS = 15 * 60 * 1000;
export const RESET_CODE_MAX_FAILURES = 5;
export const RESET_CODES_PER_HOUR = 3;
/**
 * A forgot-password request is answered no sooner than this after it arrived, whatever happened:
 * the work for a known and an unknown e-mail differs by a few queries, which the padding hides.
 */
export const FORGOT_ANSWER_MS = 250;

export interface RequestClient {
  ip?: string | undefined;
  userAgent?: string | undefined;
}

/**
 * The stored form of a code: HMAC-SHA256 under the `reset-code-digest` subkey of AUTH_KEY_SECRET,
 * over `<user id>:<code>`. A database dump alone cannot test the 10^6 candidates against it.
 */
export function digestCode(keys: AuthKeys, userId: number, code: string): string {
  return keys.digest('reset-code-digest', `${userId}:${code}`);
}

function codeMatches(keys: AuthKeys, userId: number, code: string, stored: string): boolean {
  return keys.matches('reset-code-digest', `${userId}:${code}`, stored);
}

export class PasswordReset {
  constructor(
    private readonly deps: { db: Db; now: () => Date; logger: Logger; mailer: Mailer; audit: AuditLog; keys: AuthKeys; answerMs?: number },
  ) {}

  /**
   * Issues a code for a registered e-mail (at most RESET_CODES_PER_HOUR an hour; each new code
   * replaces the earlier ones) and queues the message. Resolves no sooner than FORGOT_ANSWER_MS
   * after the call, and the same way for any e-mail.
   */
  async request(email: string, client: RequestClient): Promise<void> {
    const started = performance.now();
    try {
      await this.issue(email, client);
    } finally {
      const wait = (this.deps.answerMs ?? FORGOT_ANSWER_MS) - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
  }

  private async issue(email: string, client: RequestClient): Promise<void> {
    const { db, mailer, audit } = this.deps;
    const now = this.deps.now();
    const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email)).limit(1);
    if (!user) {
      await audit.record({ type: 'password_reset_requested', account: email, detail: 'unknown_email', ip: client.ip, userAgent: client.userAgent });
      return;
    }
    const hourAgo = new Date(now.getTime() - 60 * 60 * 1000);
    const [recent] = await db
      .select({ n: count() })
      .from(passwordResetCodes)
      .where(and(eq(passwordResetCodes.userId, user.id), gt(passwordResetCodes.createdAt, hourAgo)));
    if ((recent?.n ?? 0) >= RESET_CODES_PER_HOUR) {
      await audit.record({ type: 'password_reset_requested', userId: user.id, detail: 'hourly_limit', ip: client.ip, userAgent: client.userAgent });
      return;
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    // The new code replaces the earlier ones: only the newest unexpired code can reset.
    await db
      .update(passwordResetCodes)
      .set({ usedAt: now })
      .where(and(eq(passwordResetCodes.userId, user.id), isNull(passwordResetCodes.usedAt)));
    await db.insert(passwordResetCodes).values({
      userId: user.id,
      codeHash: digestCode(this.deps.keys, user.id, code),
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_CODE_TTL_MS),
    });
    await audit.record({ type: 'password_reset_requested', userId: user.id, detail: 'code_sent', ip: client.ip, userAgent: client.userAgent });
    mailer.send({
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
   * Sets a new password with a code: AuthError `invalid_reset_code` (2005) for an unknown e-mail, a
   * wrong, used, replaced or expired code, or one that has had RESET_CODE_MAX_FAILURES tries.
   * Ends every session of the user.
   */
  async reset(email: string, code: string, newPassword: string, client: RequestClient): Promise<void> {
    const { db, audit } = this.deps;
    const now = this.deps.now();
    const [user] = await db.select({ id: users.id, username: users.username, email: users.email }).from(users).where(eq(users.email, email)).limit(1);
    if (!user) throw new AuthError('invalid_reset_code');
    // The try is counted before anything is compared, in one conditional statement: of any number of
    // concurrent guesses at most RESET_CODE_MAX_FAILURES get a row back, so at most that many are
    // ever compared with a code (a select, a compare and an increment let 41 racing guesses through).
    const tried = await db
      .update(passwordResetCodes)
      .set({ failedAttempts: sql`${passwordResetCodes.failedAttempts} + 1` })
      .where(
        and(
          eq(passwordResetCodes.userId, user.id),
          isNull(passwordResetCodes.usedAt),
          gt(passwordResetCodes.expiresAt, now),
          lt(passwordResetCodes.failedAttempts, RESET_CODE_MAX_FAILURES),
        ),
      )
      .returning({ id: passwordResetCodes.id, codeHash: passwordResetCodes.codeHash });
    const current = tried.find((row) => codeMatches(this.deps.keys, user.id, code, row.codeHash));
    if (!current) throw new AuthError('invalid_reset_code');
    // A refused new password (or a failed hash) uses up neither the code nor the try: the user may
    // send another password.
    let passwordHash: string;
    try {
      assertAcceptablePassword('new_password', newPassword, user);
      passwordHash = await hashPassword(newPassword);
    } catch (error) {
      await this.giveBack(tried.map((row) => row.id));
      throw error;
    }
    const at = this.deps.now();
    // One statement: the code is used (only if still usable: of two concurrent resets one wins), the
    // password set, and every session ended.
    const used = db.$with('used').as(
      db
        .update(passwordResetCodes)
        .set({ usedAt: at })
        .where(
          // No try limit here: this guess was counted within it before it was compared.
          and(eq(passwordResetCodes.id, current.id), isNull(passwordResetCodes.usedAt), gt(passwordResetCodes.expiresAt, at)),
        )
        .returning({ userId: passwordResetCodes.userId }),
    );
    const changed = db.$with('changed').as(
      db
        .update(users)
        .set({ passwordHash, updatedAt: at })
        .where(sql`${users.id} in (select user_id from used)`)
        .returning({ id: users.id }),
    );
    const ended = db.$with('ended').as(
      db
        .delete(sessions)
        .where(sql`${sessions.userId} in (select id from changed)`)
        .returning({ publicId: sessions.publicId }),
    );
    const rows = await db
      .with(used, changed, ended)
      .select({
        publicId: sql<string | null>`(select string_agg(public_id::text, ',') from ended)`,
        lastSessionId: sql<string | number | null>`pg_sequence_last_value(pg_get_serial_sequence('sessions', 'id')::regclass)`,
      })
      .from(changed);
    const [row] = rows;
    if (!row) throw new AuthError('invalid_reset_code');
    // A login that verified the old password while this statement waited for the user's row may have
    // inserted its session after the snapshot above; it is older than lastSessionId. End it too.
    if (row.lastSessionId !== null) {
      await db
        .delete(sessions)
        .where(and(eq(sessions.userId, user.id), lte(sessions.id, Number(row.lastSessionId))))
        .catch((error: unknown) => this.deps.logger.error({ err: error, userId: user.id }, 'password reset, but sessions opened during it could not be ended'));
    }
    const endedIds = row.publicId ? row.publicId.split(',') : [];
    await audit.record(
      ...endedIds.map((id) => ({ type: 'session_ended' as const, userId: user.id, sessionId: id, detail: 'password_reset', ip: client.ip, userAgent: client.userAgent })),
      { type: 'password_reset', userId: user.id, ip: client.ip, userAgent: client.userAgent },
    );
    this.deps.mailer.send(passwordChangedNotice(user.email, at));
  }

  /** Tries that turned out not to be wrong guesses. */
  private async giveBack(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.deps.db
      .update(passwordResetCodes)
      .set({ failedAttempts: sql`greatest(${passwordResetCodes.failedAttempts} - 1, 0)` })
      .where(inArray(passwordResetCodes.id, ids));
  }
}

export function passwordChangedNotice(to: string, at: Date) {
  return {
    to,
    subject: 'Your password was changed',
    text: [
      `The password of your chat account was changed on ${at.toISOString().replace('T', ' ').slice(0, 19)} UTC.`,
      '',
      'If this was not you, reset your password now with "forgot password" and check your signed-in devices.',
    ].join('\n'),
  };
}

