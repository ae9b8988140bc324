// Two-factor sign-in: a TOTP factor (RFC 6238 through otpauth: SHA-1, 6 digits, 30 s, the
// current and the previous step, each code accepted once) with 10 single-use recovery codes, and the
// login's second step: a short-lived challenge a correct password gets instead of a session. Secrets
// at rest are sealed or digested under subkeys of AUTH_KEY_SECRET. Knows nothing of HTTP.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { and, desc, eq, gt, isNotNull, isNull, lt, lte, notInArray, or, sql } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import type { Db } from '../../db/client.js';
import { mfaChallenges, recoveryCodes, totpFactors, users } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { NoticeThrottle } from '../../mail/notice-throttle.js';
import type { AuthKeys } from '../../secrets/auth-key.js';
import type { AuditLog } from '../audit/log.js';
import type { AuthMethod } from '../devices/contract.js';
import type { mfaChallengeData } from './vocabulary.js';
import { RECOVERY_CODE_COUNT, type LoginMfaBody } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { userKey, type LoginGuard } from '../shared/login-guard.js';
import { insertSelect } from '../../db/sql.js';
import type { Authenticated, SessionClient, TokenSet, User } from '../types.js';
import type { SessionService } from '../sessions/service.js';
import { parseToken } from '../sessions/tokens.js';
import { afterwards } from '../shared/after-action.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';
import type { FreshSession } from '../shared/fresh-session.js';
import type { FactorNoticeKind } from './mail.js';

/** RFC 6238 as every authenticator app reads it. */
const TOTP_PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** 160 bits, the size RFC 4226 recommends for SHA-1. */
const SECRET_BYTES = 20;
export const MFA_CHALLENGE_TTL_MS = 5 * 60 * 1000;
export const MFA_CHALLENGE_MAX_TRIES = 5;
/** Live challenges kept per user; a login beyond ends the oldest (a bound on rows per password holder). */
export const MFA_CHALLENGES_PER_USER = 5;
/** Crockford's base32 alphabet (no i, l, o, u): recovery codes are read off paper. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type MfaChallenge = { mfa_token: string; methods: Array<(typeof mfaChallengeData.shape.methods.element.options)[number]> };

/** What the second factor says about a login it completed: who, how, and the password it was issued under. */
export interface SecondFactorProof {
  user: User;
  /** The first factor's method with the second step's: `password+totp`, `recovery_code`, `oidc:<provider>+totp`, … */
  method: AuthMethod;
  passwordHash: string;
}

/**
 * The session's method after the second step: the password's keep their names (`password+totp`,
 * `recovery_code`); any other first factor is followed by the factor (`oidc:<provider>+totp`).
 */
function secondStepMethod(first: string, byRecoveryCode: boolean): AuthMethod {
  if (first === 'password') return byRecoveryCode ? 'recovery_code' : 'password+totp';
  // first_factor is written only from an AuthMethod (requireSecondStep).
  return `${first as `oidc:${string}`}+${byRecoveryCode ? 'recovery_code' : 'totp'}`;
}

export interface TotpServiceDeps {
  db: Db;
  now: () => Date;
  logger: Logger;
  keys: AuthKeys;
  audit: AuditLog;
  failures: LoginGuard;
  /** The one password re-check (hashing lane, failure budget, audit of a wrong one). */
  confirmation: PasswordConfirmation;
  /** Turning TOTP on needs a verified address and a fresh session. */
  fresh: FreshSession;
  /** The issuer an authenticator app shows (TOTP_ISSUER). */
  issuer: string;
  /** Notices of factor events; none without mail. */
  notices?: NoticeThrottle | undefined;
}

/** SHA-256 (hex) of a password hash: what a challenge keeps of the password it was issued under. */
function passwordTag(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('hex');
}

/**
 * What a challenge's digest covers: its secret and the User-Agent of the login it answered, so it is
 * no use from another client (another session-to-be). Not the client's address: it changes between
 * the two steps on a mobile network.
 */
function boundToClient(secret: string, client: SessionClient): string {
  return `${secret}\n${client.userAgent ?? ''}`;
}

/** A recovery code as typed, compared: lower case, no dash or spaces. */
function normaliseRecoveryCode(code: string): string {
  return code.replace(/[- ]/g, '').toLowerCase();
}

function newRecoveryCode(): string {
  const chars = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]!);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

export class TotpService {
  constructor(private readonly deps: TotpServiceDeps) {}

  /**
   * A new pending secret (replacing a pending one); AuthError `totp_already_enabled` when TOTP is on,
   * `email_not_verified` or `reauthentication_required` (FreshSession) before anything.
   */
  async setup(auth: Authenticated): Promise<{ secret: string; otpauthUrl: string }> {
    const { db, keys } = this.deps;
    this.deps.fresh.requireForNewFactor(auth);
    const { user } = auth;
    const secret = new Secret({ size: SECRET_BYTES });
    const sealed = keys.seal('totp-secret-encryption', Buffer.from(secret.base32, 'utf8'), this.context(user.id));
    const now = this.deps.now();
    const [row] = await db
      .insert(totpFactors)
      .values({ userId: user.id, secret: sealed, createdAt: now })
      .onConflictDoUpdate({ target: totpFactors.userId, set: { secret: sealed, createdAt: now, lastStep: null }, setWhere: isNull(totpFactors.enabledAt) })
      .returning({ userId: totpFactors.userId });
    if (!row) throw new AuthError('totp_already_enabled');
    return { secret: secret.base32, otpauthUrl: this.totp(user.username, secret).toString() };
  }

  /**
   * Enables the pending factor with a code of its secret; answers the recovery codes (their digests
   * stored, replacing any earlier ones). The code's step counts as used.
   */
  async enable(auth: Authenticated, code: string, client: SessionClient): Promise<string[]> {
    const { db, keys } = this.deps;
    this.deps.fresh.requireForNewFactor(auth);
    const { user } = auth;
    const [factor] = await db.select().from(totpFactors).where(eq(totpFactors.userId, user.id)).limit(1);
    if (!factor) throw new AuthError('totp_not_set_up', 'no pending TOTP secret: POST /mfa/totp/setup first');
    if (factor.enabledAt) throw new AuthError('totp_already_enabled');
    const step = this.stepOf(user, factor.secret, code);
    if (step === undefined) throw new AuthError('wrong_mfa_code');
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const digests = codes.map((c) => keys.digest('recovery-code-digest', `${user.id}:${normaliseRecoveryCode(c)}`));
    // One statement: the factor is enabled and its recovery codes exist together, or neither (of two
    // concurrent enables one wins). Earlier codes (of a factor disabled since) go.
    const enabled = db.$with('enabled').as(
      db
        .update(totpFactors)
        .set({ enabledAt: this.deps.now(), lastStep: step })
        .where(and(eq(totpFactors.userId, user.id), isNull(totpFactors.enabledAt), eq(totpFactors.secret, factor.secret)))
        .returning({ userId: totpFactors.userId }),
    );
    const cleared = db.$with('cleared').as(
      db
        .delete(recoveryCodes)
        .where(sql`${recoveryCodes.userId} in (select user_id from enabled)`)
        .returning({ id: recoveryCodes.id }),
    );
    const values = sql.join(
      digests.map((digest) => sql`(${digest})`),
      sql`, `,
    );
    const inserted = db
      .$with('inserted', { id: sql<number>`id`.as('id') })
      .as(insertSelect(recoveryCodes, { userId: sql`enabled.user_id`, codeHash: sql`d.code_hash`, usedAt: null }, sql`from enabled, (values ${values}) as d(code_hash) returning id`));
    const [row] = await db
      .with(enabled, cleared, inserted)
      .select({ userId: enabled.userId, codes: sql<number>`(select count(*) from inserted)`.mapWith(Number) })
      .from(enabled);
    if (!row) throw new AuthError('totp_already_enabled');
    await this.event('totp_enabled', user, client);
    return codes;
  }

  /**
   * Disables TOTP: the password and a TOTP code or a recovery code (used up), both in the account's
   * failure budget. The factor, its recovery codes and any open login challenge go.
   */
  async disable(auth: Authenticated, password: string, code: string, client: SessionClient): Promise<void> {
    const { db, failures, confirmation } = this.deps;
    const { user } = auth;
    const [factor] = await db.select().from(totpFactors).where(and(eq(totpFactors.userId, user.id), isNotNull(totpFactors.enabledAt))).limit(1);
    if (!factor) throw new AuthError('totp_not_set_up', 'TOTP is not enabled');
    const byRecoveryCode = !/^[0-9]{6}$/.test(code);
    await confirmation.confirm(user, password, client, 'password', { type: 'mfa_failed', detail: 'wrong_password' });
    await failures.run([userKey(user.id)], async () => {
      const accepted = byRecoveryCode ? await this.useRecoveryCode(user.id, code) : await this.acceptTotp(user, factor.secret, code);
      if (!accepted) {
        await this.failed(user, byRecoveryCode ? 'wrong_recovery_code' : 'wrong_totp_code', client);
        throw new AuthError('wrong_mfa_code');
      }
    });
    const gone = db.$with('gone').as(db.delete(totpFactors).where(eq(totpFactors.userId, user.id)).returning({ userId: totpFactors.userId }));
    const codesGone = db.$with('codes_gone').as(db.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id)).returning({ id: recoveryCodes.id }));
    const challengesGone = db.$with('challenges_gone').as(db.delete(mfaChallenges).where(eq(mfaChallenges.userId, user.id)).returning({ id: mfaChallenges.id }));
    await db.with(gone, codesGone, challengesGone).select({ userId: gone.userId }).from(gone);
    if (byRecoveryCode) await this.event('recovery_code_used', user, client, 'totp_disable');
    await this.event('totp_disabled', user, client, byRecoveryCode ? 'recovery_code' : 'totp_code');
  }

  /**
   * Whether `code` (a TOTP code, accepted once) or `recoveryCode` (used up) is a second factor of the
   * user's enabled TOTP; AuthError `totp_not_set_up` when TOTP is off. Audits and notices nothing:
   * the caller (a re-authentication) does.
   */
  async checkCode(user: User, proof: { code: string } | { recoveryCode: string }): Promise<boolean> {
    const [factor] = await this.deps.db.select().from(totpFactors).where(and(eq(totpFactors.userId, user.id), isNotNull(totpFactors.enabledAt))).limit(1);
    if (!factor) throw new AuthError('totp_not_set_up', 'TOTP is not enabled');
    return 'code' in proof ? this.acceptTotp(user, factor.secret, proof.code) : this.useRecoveryCode(user.id, proof.recoveryCode);
  }

  /** A re-authentication by a TOTP or recovery code, in the account's failure budget: the method proved. */
  async reauthenticate(user: User, proof: { code: string } | { recoveryCode: string }, client: SessionClient, failed: (detail: string) => Promise<void>): Promise<'totp' | 'recovery_code'> {
    const byRecoveryCode = 'recoveryCode' in proof;
    await this.deps.failures.run([userKey(user.id)], async () => {
      if (!(await this.checkCode(user, proof))) {
        await failed(byRecoveryCode ? 'wrong_recovery_code' : 'wrong_totp_code');
        throw new AuthError('wrong_mfa_code');
      }
    });
    if (byRecoveryCode) await this.event('recovery_code_used', user, client, 'reauth');
    return byRecoveryCode ? 'recovery_code' : 'totp';
  }

  /**
   * Before a login's session: AuthError `mfa_required` (2007) with a new challenge when the user has
   * TOTP on. `firstFactor`: how the login proved its first factor (the session's method names it).
   */
  async requireSecondStep(user: User, client: SessionClient, firstFactor: AuthMethod): Promise<void> {
    const challenge = await this.challengeFor(user, client, firstFactor);
    if (challenge) throw new AuthError('mfa_required', undefined, undefined, challenge);
  }

  /** The second step of a login that answered 2007: its challenge and a TOTP or recovery code, then the session. */
  async signIn(body: LoginMfaBody, client: SessionClient, sessions: Pick<SessionService, 'signIn'>): Promise<{ user: User; tokens: TokenSet }> {
    const proof = await this.verify(body, client);
    try {
      // Opens only if the password the challenge was issued under is still the user's.
      return await sessions.signIn(proof.user, client, proof.method, { passwordHash: proof.passwordHash });
    } catch (error) {
      if (error instanceof AuthError && error.reason === 'wrong_password') throw new AuthError('invalid_mfa_token');
      throw error;
    }
  }

  /**
   * The second step a login with a correct password must take, when the user has a factor: a new
   * challenge (the user's used and expired ones pruned, at most MFA_CHALLENGES_PER_USER kept); undefined
   * when the password alone signs in.
   */
  async challengeFor(user: User, client: SessionClient, firstFactor: AuthMethod): Promise<MfaChallenge | undefined> {
    const { db, keys } = this.deps;
    const [factor] = await db
      .select({ userId: totpFactors.userId })
      .from(totpFactors)
      .where(and(eq(totpFactors.userId, user.id), isNotNull(totpFactors.enabledAt)))
      .limit(1);
    if (!factor) return undefined;
    const now = this.deps.now();
    await db.delete(mfaChallenges).where(and(eq(mfaChallenges.userId, user.id), or(isNotNull(mfaChallenges.usedAt), lte(mfaChallenges.expiresAt, now))));
    const newest = db
      .select({ id: mfaChallenges.id })
      .from(mfaChallenges)
      .where(eq(mfaChallenges.userId, user.id))
      .orderBy(desc(mfaChallenges.id))
      .limit(MFA_CHALLENGES_PER_USER - 1);
    await db.delete(mfaChallenges).where(and(eq(mfaChallenges.userId, user.id), notInArray(mfaChallenges.id, newest)));
    const id = randomBytes(16).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    await db.insert(mfaChallenges).values({
      publicId: id,
      userId: user.id,
      secretHash: keys.digest('mfa-challenge-digest', boundToClient(secret, client)),
      passwordTag: passwordTag(user.passwordHash),
      firstFactor,
      createdAt: now,
      expiresAt: new Date(now.getTime() + MFA_CHALLENGE_TTL_MS),
    });
    // The passkeys work adds 'passkey' here when it is merged.
    return { mfa_token: `${id}.${secret}`, methods: ['totp', 'recovery_code'] };
  }

  /**
   * Checks the second step of a login: the challenge (AuthError `invalid_mfa_token` when it is unknown,
   * used, expired, out of tries, or the password changed since) and its code (`invalid_mfa_code`, counted
   * in the account's failure budget, audited and noticed). The challenge is used up on success.
   */
  async verify(body: LoginMfaBody, client: SessionClient): Promise<SecondFactorProof> {
    const { db, keys, failures } = this.deps;
    const parsed = parseToken(body.mfa_token);
    if (!parsed) throw new AuthError('invalid_mfa_token');
    const now = this.deps.now();
    const live = and(eq(mfaChallenges.publicId, parsed.id), isNull(mfaChallenges.usedAt), gt(mfaChallenges.expiresAt, now));
    // The try is counted before anything is compared, in one conditional statement: of any number of
    // concurrent attempts at most MFA_CHALLENGE_MAX_TRIES get the row back.
    const [challenge] = await db
      .update(mfaChallenges)
      .set({ tries: sql`${mfaChallenges.tries} + 1` })
      .where(and(live, lt(mfaChallenges.tries, MFA_CHALLENGE_MAX_TRIES)))
      .returning({ id: mfaChallenges.id, userId: mfaChallenges.userId, secretHash: mfaChallenges.secretHash, passwordTag: mfaChallenges.passwordTag, firstFactor: mfaChallenges.firstFactor });
    // The secret is digested with the User-Agent of the login that got it: the challenge of one client
    // (one browser, one app install) completes there only.
    if (!challenge || !keys.matches('mfa-challenge-digest', boundToClient(parsed.secret, client), challenge.secretHash)) throw new AuthError('invalid_mfa_token');
    const [user] = await db.select().from(users).where(eq(users.id, challenge.userId)).limit(1);
    if (!user || passwordTag(user.passwordHash) !== challenge.passwordTag) throw new AuthError('invalid_mfa_token');
    const [factor] = await db.select().from(totpFactors).where(and(eq(totpFactors.userId, user.id), isNotNull(totpFactors.enabledAt))).limit(1);
    if (!factor) throw new AuthError('invalid_mfa_token');
    const byRecoveryCode = body.recovery_code !== undefined;
    await failures.run([userKey(user.id)], async () => {
      const accepted = byRecoveryCode ? await this.useRecoveryCode(user.id, body.recovery_code!) : await this.acceptTotp(user, factor.secret, body.code!);
      if (!accepted) {
        await this.failed(user, byRecoveryCode ? 'wrong_recovery_code' : 'wrong_totp_code', client);
        throw new AuthError('invalid_mfa_code');
      }
    });
    const [used] = await db
      .update(mfaChallenges)
      .set({ usedAt: this.deps.now() })
      .where(and(eq(mfaChallenges.id, challenge.id), isNull(mfaChallenges.usedAt)))
      .returning({ id: mfaChallenges.id });
    // Another attempt with the same challenge won the race.
    if (!used) throw new AuthError('invalid_mfa_token');
    if (byRecoveryCode) await this.event('recovery_code_used', user, client, 'login');
    return { user, method: secondStepMethod(challenge.firstFactor, byRecoveryCode), passwordHash: user.passwordHash };
  }

  /** The time step a code of the sealed secret is for (the current or the previous one); undefined otherwise. */
  private stepOf(user: User, sealed: string, code: string): number | undefined {
    const totp = this.totp(user.username, this.unseal(user.id, sealed));
    const timestamp = this.deps.now().getTime();
    const delta = totp.validate({ token: code, timestamp, window: 1 });
    // One step of drift backwards only: a code of the next step is refused (RFC 6238 §5.2).
    if (delta === null || delta > 0) return undefined;
    return totp.counter({ timestamp }) + delta;
  }

  /** A code of the enabled factor, accepted once: its step must be later than the last accepted one. */
  private async acceptTotp(user: User, sealed: string, code: string): Promise<boolean> {
    const step = this.stepOf(user, sealed, code);
    if (step === undefined) return false;
    const [row] = await this.deps.db
      .update(totpFactors)
      .set({ lastStep: step })
      .where(and(eq(totpFactors.userId, user.id), isNotNull(totpFactors.enabledAt), or(isNull(totpFactors.lastStep), lt(totpFactors.lastStep, step))))
      .returning({ userId: totpFactors.userId });
    return row !== undefined;
  }

  /** Uses up one of the user's unused recovery codes, compared in constant time; false when none matches. */
  private async useRecoveryCode(userId: number, code: string): Promise<boolean> {
    const { db, keys } = this.deps;
    const candidates = await db
      .select({ id: recoveryCodes.id, codeHash: recoveryCodes.codeHash })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)))
      .limit(RECOVERY_CODE_COUNT);
    const message = `${userId}:${normaliseRecoveryCode(code)}`;
    const match = candidates.filter((row) => keys.matches('recovery-code-digest', message, row.codeHash))[0];
    if (!match) return false;
    const [used] = await db
      .update(recoveryCodes)
      .set({ usedAt: this.deps.now() })
      .where(and(eq(recoveryCodes.id, match.id), isNull(recoveryCodes.usedAt)))
      .returning({ id: recoveryCodes.id });
    return used !== undefined;
  }

  private totp(label: string, secret: Secret): TOTP {
    return new TOTP({ issuer: this.deps.issuer, label, secret, ...TOTP_PARAMETERS });
  }

  private context(userId: number): string {
    return `totp:${userId}`;
  }

  private unseal(userId: number, sealed: string): Secret {
    const base32 = this.deps.keys.open('totp-secret-encryption', sealed, this.context(userId));
    // Never the secret: only that AUTH_KEY_SECRET is not the one it was stored under.
    if (!base32) throw new Error(`TOTP secret of user ${userId} cannot be decrypted: AUTH_KEY_SECRET differs from the one it was stored under`);
    return Secret.fromBase32(base32.toString('utf8'));
  }

  /** A wrong second factor after a right password (or with a live challenge): audited, and the owner told. */
  private async failed(user: User, detail: 'wrong_totp_code' | 'wrong_recovery_code', client: SessionClient): Promise<void> {
    await this.event('mfa_failed', user, client, detail);
  }

  private async event(type: FactorNoticeKind, user: User, client: SessionClient, detail?: string): Promise<void> {
    const { audit, notices, logger } = this.deps;
    notices?.notify({ kind: type, account: String(user.id), to: user.email, at: this.deps.now() });
    await afterwards(logger, `${type} audit`, () => audit.record({ type, userId: user.id, detail, ip: client.ip, userAgent: client.userAgent }));
  }
}
