// Re-authentication (POST /reauth): a signed-in session proves one factor again, and its row keeps
// when (sessions.reauthenticated_at), so every instance agrees whether it is fresh. Password through
// the one password re-check; TOTP and recovery codes in the account's failure budget like the login's
// second step; a passkey only of the session's own user. Knows nothing of HTTP.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { sessions } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { AuditLog } from '../audit/log.js';
import type { ReauthBody } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { userKey, type LoginGuard } from '../shared/login-guard.js';
import { PasskeyLoginError, type Passkeys } from '../passkeys/ceremonies.js';
import type { Authenticated, SessionClient } from '../types.js';
import { afterwards } from '../shared/after-action.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';
import type { FreshSession } from '../shared/fresh-session.js';
import type { TotpService } from '../totp/service.js';

/** The factor a re-authentication proved: the audit row's detail. */
export type ReauthMethod = 'password' | 'totp' | 'recovery_code' | 'passkey';

export interface ReauthServiceDeps {
  db: Db;
  logger: Logger;
  now: () => Date;
  audit: AuditLog;
  failures: LoginGuard;
  confirmation: PasswordConfirmation;
  totp: Pick<TotpService, 'checkCode' | 'recoveryCodeUsed'>;
  /** Undefined: passkeys are off. */
  passkeys: Passkeys | undefined;
  fresh: FreshSession;
}

export class ReauthService {
  constructor(private readonly deps: ReauthServiceDeps) {}

  /**
   * Checks the one factor of `body` and marks the session: fresh from now for REAUTH_WINDOW_S.
   * Failures answer as the factor's own check does (2003, 2011, 2013, 2014) and are audited
   * (`reauthentication_failed`); password and codes spend the account's failure budget.
   */
  async reauthenticate(auth: Authenticated, body: ReauthBody, client: SessionClient): Promise<{ reauthenticatedAt: Date; freshUntil: Date }> {
    const { user } = auth;
    const method = await this.check(auth, body, client);
    const at = this.deps.now();
    const [marked] = await this.deps.db.update(sessions).set({ reauthenticatedAt: at }).where(eq(sessions.id, auth.sessionId)).returning({ id: sessions.id });
    // Ended (logout, another device, a password change) while the factor was checked.
    if (!marked) throw new AuthError('invalid_access_token');
    await afterwards(this.deps.logger, 're-authentication audit', () =>
      this.deps.audit.record({ type: 'reauthenticated', userId: user.id, sessionId: auth.sessionPublicId, detail: method, ip: client.ip, userAgent: client.userAgent }),
    );
    return { reauthenticatedAt: at, freshUntil: this.deps.fresh.freshUntil(at) };
  }

  private async check(auth: Authenticated, body: ReauthBody, client: SessionClient): Promise<ReauthMethod> {
    const { user } = auth;
    const failed = (detail: string) =>
      this.deps.audit.record({ type: 'reauthentication_failed', userId: user.id, sessionId: auth.sessionPublicId, detail, ip: client.ip, userAgent: client.userAgent });
    if (body.password !== undefined) {
      await this.deps.confirmation.confirm(user, body.password, client, 'password', { type: 'reauthentication_failed', detail: 'wrong_password' });
      return 'password';
    }
    if (body.totp_code !== undefined || body.recovery_code !== undefined) {
      const byRecoveryCode = body.recovery_code !== undefined;
      await this.deps.failures.run([userKey(user.id)], async () => {
        const accepted = await this.deps.totp.checkCode(user, byRecoveryCode ? { recoveryCode: body.recovery_code! } : { code: body.totp_code! });
        if (!accepted) {
          await failed(byRecoveryCode ? 'wrong_recovery_code' : 'wrong_totp_code');
          throw new AuthError('wrong_mfa_code');
        }
      });
      if (byRecoveryCode) await this.deps.totp.recoveryCodeUsed(user, client, 'reauth');
      return byRecoveryCode ? 'recovery_code' : 'totp';
    }
    const passkeys = this.passkeysOrRefuse();
    try {
      await passkeys.login(body.passkey!, user.id);
    } catch (error) {
      if (!(error instanceof PasskeyLoginError)) throw error;
      await failed(`passkey_${error.detail}`);
      throw new AuthError('passkey_reauth_refused');
    }
    return 'passkey';
  }

  private passkeysOrRefuse(): Passkeys {
    if (!this.deps.passkeys) throw new AuthError('passkeys_disabled');
    return this.deps.passkeys;
  }
}
