// The account's e-mail address: a 6-digit code mailed at registration (and on request)
// proves it; a change is asked for with the password, mailed to the new address as a code, and takes
// effect when that code comes back. Same rules as reset codes: single use, 15 minutes, tries counted
// before any comparison, keyed digests at rest, constant-time comparison. Knows nothing of HTTP.
import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { emailCodes, passwordResetCodes, sessions, users } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { Folded, NoticeThrottle } from '../../mail/notice-throttle.js';
import type { MailSlot, Mailer } from '../../mail/mailer.js';
import { ONE_TIME_CODE_MAX_FAILURES, ONE_TIME_CODE_TTL_MS, OneTimeCodes } from '../shared/one-time-code.js';
import type { AuthKeys } from '../../secrets/auth-key.js';
import type { AuditLog } from '../audit/log.js';
import type { Budget } from '../shared/budget.js';
import { AuthError } from '../shared/auth-error.js';
import { uniqueViolation } from '../../db/sql.js';
import type { Authenticated, SessionClient, User } from '../types.js';
import { afterwards } from '../shared/after-action.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';
import type { FreshSession } from '../shared/fresh-session.js';
import { addressProof } from './proof.js';

export const EMAIL_CODE_TTL_MS = ONE_TIME_CODE_TTL_MS;
/** Wrong tries a code takes; counted before the comparison, so concurrent guesses cannot pass it. */
export const EMAIL_CODE_MAX_FAILURES = ONE_TIME_CODE_MAX_FAILURES;
/** Codes an account may ask for per hour (resends and change requests together; registration's first code aside). */
export const EMAIL_CODES_PER_HOUR = 5;
export const EMAIL_CODES_WINDOW_MS = 60 * 60 * 1000;

export type EmailCodePurpose = 'verify' | 'change';

const EMAIL_INDEX = 'users_email_key';

export interface EmailServiceDeps {
  db: Db;
  now: () => Date;
  logger: Logger;
  /** None in production without SMTP_URL: the endpoints then answer 1004 and registration mails nothing. */
  mailer?: Mailer | undefined;
  /** "Your address was changed" notices to the old address (limited per account and recipient). */
  notices?: NoticeThrottle | undefined;
  audit: AuditLog;
  keys: AuthKeys;
  /** The one password re-check (hashing lane, failure budget, audit of a wrong one). */
  confirmation: PasswordConfirmation;
  /** A change of address needs a fresh session. */
  fresh: FreshSession;
  /** Codes asked for per account and hour (EMAIL_CODES_PER_HOUR). */
  codeRequests: Budget;
}

export class EmailService {
  constructor(private readonly deps: EmailServiceDeps) {}

  /** Whether codes can be mailed (the endpoints exist). */
  get available(): boolean {
    return this.deps.mailer !== undefined;
  }

  /**
   * After a registration: mails the first verification code. Never fails the registration (which has
   * answered already): without mail, or with the code queue full, the user asks for one later.
   */
  async registered(user: User): Promise<void> {
    const { mailer, logger } = this.deps;
    if (!mailer) return;
    const slot = mailer.reserve('code');
    if (!slot) {
      logger.warn({ userId: user.id, pending: mailer.pending() }, 'mail code queue full: no verification code mailed at registration (the user can ask again)');
      return;
    }
    try {
      await this.issue(user.id, 'verify', user.email, slot);
    } finally {
      slot.release();
    }
  }

  /** Mails a new verification code to the account's address; AuthError `email_already_verified` when there is nothing to prove. */
  async resend(auth: Authenticated): Promise<void> {
    const mailer = this.mailerOrRefuse();
    const { user } = auth;
    if (user.emailVerifiedAt !== null) throw new AuthError('email_already_verified');
    await this.withSlot(mailer, user.id, (slot) => this.issue(user.id, 'verify', user.email, slot));
  }

  /** Proves the account's address with the code mailed to it. */
  async verify(auth: Authenticated, code: string, client: SessionClient): Promise<{ email: string }> {
    this.mailerOrRefuse();
    const { db, audit } = this.deps;
    const { user } = auth;
    if (user.emailVerifiedAt !== null) throw new AuthError('email_already_verified');
    const matched = await this.matchCode(user.id, 'verify', code, client);
    const at = this.deps.now();
    const used = this.used(matched.id, at);
    // Only while the account still has the address the code was mailed to.
    const verified = await db
      .with(used)
      .update(users)
      .set({ ...addressProof.record(at), updatedAt: at })
      .where(sql`(${users.id}, ${users.email}) in (select user_id, email from used)`)
      .returning({ email: users.email });
    if (verified.length === 0) throw new AuthError('invalid_email_code');
    await audit.record({ ...addressProof.audited('code'), userId: user.id, ip: client.ip, userAgent: client.userAgent });
    return { email: verified[0]!.email };
  }

  /**
   * Asks to move the account to `newEmail`: the password is checked like a password change (on the
   * account's hashing lane, a wrong one spends the per-account failure budget and is audited), then a
   * code goes to the new address, registered to another account or not (confirmChange refuses a
   * taken one). `reauthentication_required` (before anything) when the session is not fresh. The
   * confirmation needs no fresh session: it completes only a change a fresh session asked for, with
   * the code mailed to the new address.
   */
  async requestChange(auth: Authenticated, newEmail: string, password: string, client: SessionClient): Promise<void> {
    const mailer = this.mailerOrRefuse();
    const { audit, confirmation } = this.deps;
    const { user } = auth;
    this.deps.fresh.require(auth);
    if (newEmail === user.email) throw new AuthError('same_email');
    await confirmation.confirm(user, password, client, 'password', { type: 'email_change_failed', detail: 'wrong_password' });
    // Whether another account has the address is not looked at here: the answer, the code budget
    // and the mail are the same for a taken address as for a free one, so this endpoint tells no one
    // which addresses are registered. The unique index decides at confirmation (2002 then).
    await this.withSlot(mailer, user.id, (slot) => this.issue(user.id, 'change', newEmail, slot));
    await audit.record({ type: 'email_change_requested', userId: user.id, ip: client.ip, userAgent: client.userAgent });
  }

  /**
   * Moves the account to the address the change code was mailed to, marks it verified, ends every
   * other session and every outstanding reset code (they went to the old address), and tells the old
   * address. One statement: of two concurrent confirmations one wins; the unique index on the
   * address decides against an account that registered it meanwhile (AuthError `email_taken`).
   */
  async confirmChange(auth: Authenticated, code: string, client: SessionClient): Promise<{ email: string }> {
    this.mailerOrRefuse();
    const { db, audit, notices, logger } = this.deps;
    const { user } = auth;
    const matched = await this.matchCode(user.id, 'change', code, client);
    const at = this.deps.now();
    const used = this.used(matched.id, at);
    const changed = db.$with('changed').as(
      db
        .update(users)
        .set({ email: sql`(select email from used)`, emailVerifiedAt: at, updatedAt: at })
        .where(sql`${users.id} in (select user_id from used)`)
        .returning({ id: users.id, email: users.email }),
    );
    const ended = db.$with('ended').as(
      db
        .delete(sessions)
        .where(and(sql`${sessions.userId} in (select id from changed)`, sql`${sessions.id} <> ${auth.sessionId}`))
        .returning({ publicId: sessions.publicId }),
    );
    // Reset codes went to the old address: it must not be able to take the account back.
    const resets = db.$with('resets').as(
      db
        .update(passwordResetCodes)
        .set({ usedAt: at })
        .where(and(sql`${passwordResetCodes.userId} in (select id from changed)`, isNull(passwordResetCodes.usedAt)))
        .returning({ id: passwordResetCodes.id }),
    );
    let row: { email: string; ended: string | null; resets: number } | undefined;
    try {
      [row] = await db
        .with(used, changed, ended, resets)
        .select({
          email: changed.email,
          ended: sql<string | null>`(select string_agg(public_id::text, ',') from ended)`,
          resets: sql<number>`(select count(*) from resets)`,
        })
        .from(changed);
    } catch (error) {
      if (uniqueViolation(error) !== EMAIL_INDEX) throw error;
      await audit.record({ type: 'email_change_failed', userId: user.id, detail: 'email_taken', ip: client.ip, userAgent: client.userAgent });
      throw new AuthError('email_taken');
    }
    // Used by a concurrent confirmation, or expired in between.
    if (!row) throw new AuthError('invalid_email_code');
    const endedIds = row.ended ? row.ended.split(',') : [];
    await afterwards(logger, 'e-mail change audit', () =>
      audit.record(
        ...endedIds.map((id) => ({ type: 'session_ended' as const, userId: user.id, sessionId: id, detail: 'email_change', ip: client.ip, userAgent: client.userAgent })),
        { type: 'email_changed', userId: user.id, ip: client.ip, userAgent: client.userAgent },
      ),
    );
    notices?.notify({ kind: 'email_changed', account: String(user.id), to: user.email, at });
    return { email: row.email };
  }

  private mailerOrRefuse(): Mailer {
    if (!this.deps.mailer) throw new AuthError('mail_disabled', 'e-mail codes are not available: mail is not configured');
    return this.deps.mailer;
  }

  /** The per-account hourly budget of codes, then a place in the code queue; both given back if nothing was issued. */
  private async withSlot(mailer: Mailer, userId: number, work: (slot: MailSlot) => Promise<void>): Promise<void> {
    const { codeRequests, logger } = this.deps;
    const key = `user:${userId}`;
    const retryAfterS = await codeRequests.spend([key]);
    if (retryAfterS !== undefined) throw new AuthError('rate_limited', `at most ${EMAIL_CODES_PER_HOUR} e-mail codes an hour, retry later`, retryAfterS);
    const slot = mailer.reserve('code');
    if (!slot) {
      await codeRequests.giveBack([key]);
      logger.warn({ pending: mailer.pending() }, 'mail code queue full: e-mail code request refused (503)');
      throw new AuthError('mail_busy', undefined, mailer.retryAfterS());
    }
    try {
      await work(slot);
    } catch (error) {
      await codeRequests.giveBack([key]);
      throw error;
    } finally {
      slot.release();
    }
  }

  /** A new code for `purpose`, mailed to `to`; the earlier live code of that purpose is retired. */
  private async issue(userId: number, purpose: EmailCodePurpose, to: string, slot: MailSlot): Promise<void> {
    const { db, keys } = this.deps;
    const now = this.deps.now();
    const { code, digest, expiresAt } = new OneTimeCodes(keys, EMAIL_CODE_DIGEST).issue(codeScope(userId, purpose, to), now);
    const retired = db.$with('retired').as(
      db
        .update(emailCodes)
        .set({ usedAt: now })
        .where(and(eq(emailCodes.userId, userId), eq(emailCodes.purpose, purpose), isNull(emailCodes.usedAt)))
        .returning({ id: emailCodes.id }),
    );
    await db
      .with(retired)
      .insert(emailCodes)
      .values({ userId, purpose, email: to, codeHash: digest, createdAt: now, expiresAt });
    slot.send(purpose === 'verify' ? verificationMail(to, code) : changeMail(to, code));
  }

  /**
   * The live code of `purpose` that `code` is, or AuthError `invalid_email_code`. The try is counted
   * before anything is compared, by one conditional statement: of any number of concurrent guesses at
   * most EMAIL_CODE_MAX_FAILURES get the code's row back. A verification code lives only while the
   * account has the address it was mailed to.
   */
  private async matchCode(userId: number, purpose: EmailCodePurpose, code: string, client: SessionClient): Promise<{ id: number; email: string }> {
    const { db, keys, audit } = this.deps;
    const now = this.deps.now();
    const tried = await db
      .update(emailCodes)
      .set({ failedAttempts: sql`${emailCodes.failedAttempts} + 1` })
      .where(
        and(
          eq(emailCodes.userId, userId),
          eq(emailCodes.purpose, purpose),
          isNull(emailCodes.usedAt),
          gt(emailCodes.expiresAt, now),
          lt(emailCodes.failedAttempts, EMAIL_CODE_MAX_FAILURES),
          purpose === 'verify' ? sql`${emailCodes.email} = (select ${users.email} from ${users} where ${users.id} = ${emailCodes.userId})` : undefined,
        ),
      )
      .returning({ id: emailCodes.id, email: emailCodes.email, codeHash: emailCodes.codeHash });
    const matched = tried.find((row) => new OneTimeCodes(keys, EMAIL_CODE_DIGEST).matches(codeScope(userId, purpose, row.email), code, row.codeHash));
    if (!matched) {
      // Only a counted try is written: rows per code stay within its tries.
      if (tried.length > 0) {
        await audit.record({ type: purpose === 'verify' ? 'email_verification_failed' : 'email_change_failed', userId, detail: 'wrong_code', ip: client.ip, userAgent: client.userAgent });
      }
      throw new AuthError('invalid_email_code');
    }
    return matched;
  }

  /** The code used, if still usable (of two concurrent uses one wins); a CTE yielding its user and address. */
  private used(id: number, at: Date) {
    const { db } = this.deps;
    return db.$with('used').as(
      db
        .update(emailCodes)
        .set({ usedAt: at })
        .where(and(eq(emailCodes.id, id), isNull(emailCodes.usedAt), gt(emailCodes.expiresAt, at)))
        .returning({ userId: emailCodes.userId, email: emailCodes.email }),
    );
  }
}

/** E-mail codes are digested under the `email-code-digest` subkey. */
const EMAIL_CODE_DIGEST = 'email-code-digest';

/** What a code is good for: its user, purpose and address only. */
function codeScope(userId: number, purpose: EmailCodePurpose, email: string): string {
  return `${userId}:${purpose}:${email}`;
}

function verificationMail(to: string, code: string) {
  return {
    to,
    subject: 'Your e-mail verification code',
    text: [
      'Confirm that this address belongs to your chat account.',
      '',
      `Your code: ${code}`,
      '',
      'It is valid for 15 minutes and replaces any code sent before. If you did not create an account, ignore this message.',
    ].join('\n'),
  };
}

function changeMail(to: string, code: string) {
  return {
    to,
    subject: 'Confirm your new e-mail address',
    text: [
      'Someone asked to move a chat account to this address.',
      '',
      `Your code: ${code}`,
      '',
      'It is valid for 15 minutes. If you did not ask for it, ignore this message: nothing changes without the code.',
    ].join('\n'),
  };
}

/** The "your e-mail address was changed" notice to the old address, or the summary of those folded into one window. */
export function emailChangedNotice(to: string, at: Date, folded?: Folded) {
  const time = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const what = folded
    ? folded.count === 1
      ? `The e-mail address of your chat account was changed again on ${time(folded.last)}.`
      : `The e-mail address of your chat account was changed ${folded.count} more times between ${time(folded.first)} and ${time(folded.last)}.`
    : `The e-mail address of your chat account was changed on ${time(at)}; messages now go to the new address, not to this one.`;
  return {
    to,
    subject: 'Your e-mail address was changed',
    text: [what, '', 'If this was not you, sign in, change your password and check your signed-in devices; if you cannot sign in, contact support.'].join('\n'),
  };
}
