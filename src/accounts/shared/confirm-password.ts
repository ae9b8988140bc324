// The password re-check of an authenticated user, one way for every action that asks for it:
// DELETE /account, PUT /password, PUT /email, DELETE /mfa/totp and POST /reauth.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { users } from '../../db/schema.js';
import type { AuditLog } from '../audit/log.js';
import { ensureHashCapacity, verifyPassword } from '../passwords.js';
import type { AuthEventType } from '../vocabulary.js';
import { AuthError } from './auth-error.js';
import { userKey, type LoginGuard } from './login-guard.js';
import type { AuthService } from '../sessions/auth-service.js';
import type { SessionClient, User } from '../types.js';

/** What a wrong password writes: the audit row's type and detail. */
export interface WrongPasswordAudit {
  type: AuthEventType;
  detail: string;
}

export interface PasswordConfirmationDeps {
  db: Db;
  /** The user's hashing lane and the wait bound of logins. */
  auth: Pick<AuthService, 'hashing'>;
  /** The per-account failure budget of logins: a wrong password here spends it too. */
  failures: LoginGuard;
  audit: AuditLog;
}

export class PasswordConfirmation {
  constructor(private readonly deps: PasswordConfirmationDeps) {}

  /**
   * Verifies the user's password, loaded here, on the user's own hashing lane with the login's wait
   * bound (refused `server_busy` before any database work when that bound would be passed), counted in the failure budget of the account's login names, so
   * guesses here and at login add up. A wrong one is audited and answers AuthError
   * `wrong_old_password` (2003, 403) naming `field`; a refusal before any check (the budget spent:
   * 1003, busy: 1005) writes nothing, so a flood cannot turn into writes. Returns the verified hash.
   */
  async confirm(user: Pick<User, 'id' | 'username' | 'email'>, password: string, client: SessionClient, field: 'password' | 'old_password', audit: WrongPasswordAudit): Promise<string> {
    const { failures } = this.deps;
    try {
      return await failures.run([userKey(user.id)], () => this.verify(user.id, password));
    } catch (error) {
      if (error instanceof AuthError && error.reason === 'wrong_old_password') {
        await this.deps.audit.record({ type: audit.type, userId: user.id, detail: audit.detail, ip: client.ip, userAgent: client.userAgent });
        throw new AuthError('wrong_old_password', `${field} is wrong`);
      }
      throw error;
    }
  }

  /** The stored hash when `password` matches it; AuthError `wrong_old_password` otherwise. */
  private async verify(userId: number, password: string): Promise<string> {
    const hashing = this.deps.auth.hashing(`user:${userId}`);
    ensureHashCapacity(hashing);
    const [current] = await this.deps.db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId)).limit(1);
    // The session was valid a moment ago; a user deleted in between reads as a dead token.
    if (!current) throw new AuthError('invalid_access_token');
    if (!(await verifyPassword(current.passwordHash, password, hashing))) throw new AuthError('wrong_old_password');
    return current.passwordHash;
  }
}
