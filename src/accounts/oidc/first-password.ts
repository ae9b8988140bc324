// A first password for an account a provider created (POST /password/set): the registration's
// password rules, a fresh session, and only while the account has none. Knows nothing of HTTP.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { users } from '../../db/schema.js';
import type { AuditLog } from '../audit/log.js';
import { hashPassword, hasPassword, NO_PASSWORD } from '../passwords.js';
import type { AuthService } from '../sessions/auth-service.js';
import { AuthError } from '../shared/auth-error.js';
import type { FreshSession } from '../shared/fresh-session.js';
import { assertAcceptablePassword } from '../shared/password-policy.js';
import type { Authenticated, SessionClient } from '../types.js';

export class FirstPassword {
  constructor(private readonly deps: { db: Db; now: () => Date; audit: AuditLog; auth: AuthService; fresh: FreshSession }) {}

  /** AuthError `password_already_set` when the account has one (also when another request set it meanwhile). */
  async set(auth: Authenticated, password: string, client: SessionClient): Promise<void> {
    const { db, now } = this.deps;
    const { user } = auth;
    if (hasPassword(user)) throw new AuthError('password_already_set');
    this.deps.fresh.require(auth);
    assertAcceptablePassword('password', password, { username: user.username, email: user.email });
    const hash = await hashPassword(password, this.deps.auth.hashing(`user:${user.id}`));
    const [set] = await db
      .update(users)
      .set({ passwordHash: hash, updatedAt: now() })
      .where(and(eq(users.id, user.id), eq(users.passwordHash, NO_PASSWORD)))
      .returning({ id: users.id });
    if (!set) throw new AuthError('password_already_set');
    await this.deps.audit.record({ type: 'password_set', userId: user.id, sessionId: auth.sessionPublicId, ip: client.ip, userAgent: client.userAgent });
  }
}
