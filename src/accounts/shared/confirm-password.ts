// The password re-check of an authenticated user, one way for every action that asks for it:
// DELETE /account, PUT /password, PUT /email, DELETE /mfa/totp and POST /reauth.
import type { AuditLog, AuthEventType } from '../audit/log.js';
import { AuthError } from './auth-error.js';
import { userKey, type LoginGuard } from './login-guard.js';
import type { AuthService } from '../sessions/auth-service.js';
import type { SessionClient, User } from '../types.js';

/** What a wrong password writes: the audit row's type and detail. */
export interface WrongPasswordAudit {
  type: Extract<AuthEventType, 'password_change_failed' | 'account_deletion_failed' | 'email_change_failed' | 'mfa_failed' | 'reauthentication_failed'>;
  detail: string;
}

export interface PasswordConfirmationDeps {
  auth: AuthService;
  /** The per-account failure budget of logins: a wrong password here spends it too. */
  failures: LoginGuard;
  audit: AuditLog;
}

export class PasswordConfirmation {
  constructor(private readonly deps: PasswordConfirmationDeps) {}

  /**
   * Verifies the user's password on the user's own hashing lane with the login's wait bound
   * (AuthService.confirmPassword), counted in the failure budget of the account's login names, so
   * guesses here and at login add up. A wrong one is audited and answers AuthError
   * `wrong_old_password` (2003, 403) naming `field`; a refusal before any check (the budget spent:
   * 1003, busy: 1005) writes nothing, so a flood cannot turn into writes. Returns the verified hash.
   */
  async confirm(user: Pick<User, 'id' | 'username' | 'email'>, password: string, client: SessionClient, field: 'password' | 'old_password', audit: WrongPasswordAudit): Promise<string> {
    const { auth, failures } = this.deps;
    try {
      return await failures.run([userKey(user.id)], () => auth.confirmPassword(user.id, password));
    } catch (error) {
      if (error instanceof AuthError && error.reason === 'wrong_old_password') {
        await this.deps.audit.record({ type: audit.type, userId: user.id, detail: audit.detail, ip: client.ip, userAgent: client.userAgent });
        throw new AuthError('wrong_old_password', `${field} is wrong`);
      }
      throw error;
    }
  }
}
