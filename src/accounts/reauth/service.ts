// Re-authentication (POST /reauth): a signed-in session proves one factor again, and its row keeps
// when (sessions.reauthenticated_at), so every instance agrees whether it is fresh. The password
// through the one password re-check; a second factor by its own check (the feature list provides
// them). Knows nothing of HTTP.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { sessions } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { AuditLog } from '../audit/log.js';
import { AuthError } from '../shared/auth-error.js';
import type { Authenticated, SessionClient } from '../types.js';
import { afterwards } from '../shared/after-action.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';
import type { FreshSession } from '../shared/fresh-session.js';
import type { ReauthBody, ReauthFactor } from '../shared/second-factors.js';

export interface ReauthServiceDeps {
  db: Db;
  logger: Logger;
  now: () => Date;
  audit: AuditLog;
  confirmation: PasswordConfirmation;
  fresh: FreshSession;
}

export class ReauthService {
  constructor(private readonly deps: ReauthServiceDeps) {}

  /**
   * Checks the one factor of `body` and marks the session: fresh from now for REAUTH_WINDOW_S.
   * Failures answer as the factor's own check does (2003, or the factor's refusals) and are audited
   * (`reauthentication_failed`); the password and codes spend the account's failure budget.
   */
  async reauthenticate(auth: Authenticated, body: ReauthBody, client: SessionClient, factors: readonly ReauthFactor[]): Promise<{ reauthenticatedAt: Date; freshUntil: Date }> {
    const { user } = auth;
    const method = await this.check(auth, body, client, factors);
    const at = this.deps.now();
    const [marked] = await this.deps.db.update(sessions).set({ reauthenticatedAt: at }).where(eq(sessions.id, auth.sessionId)).returning({ id: sessions.id });
    // Ended (logout, another device, a password change) while the factor was checked.
    if (!marked) throw new AuthError('invalid_access_token');
    await afterwards(this.deps.logger, 're-authentication audit', () =>
      this.deps.audit.record({ type: 'reauthenticated', userId: user.id, sessionId: auth.sessionPublicId, detail: method, ip: client.ip, userAgent: client.userAgent }),
    );
    return { reauthenticatedAt: at, freshUntil: this.deps.fresh.freshUntil(at) };
  }

  /** The method proved: `password`, or the detail the factor's check returns. */
  private async check(auth: Authenticated, body: ReauthBody, client: SessionClient, factors: readonly ReauthFactor[]): Promise<string> {
    const { user } = auth;
    if (typeof body.password === 'string') {
      await this.deps.confirmation.confirm(user, body.password, client, 'password', { type: 'reauthentication_failed', detail: 'wrong_password' });
      return 'password';
    }
    const failed = (detail: string) =>
      this.deps.audit.record({ type: 'reauthentication_failed', userId: user.id, sessionId: auth.sessionPublicId, detail, ip: client.ip, userAgent: client.userAgent });
    for (const factor of factors) {
      const proved = factor.check(user, body, client, failed);
      if (proved) return proved;
    }
    // The body's rule admits exactly one factor: not reached.
    throw new AuthError('invalid_request');
  }
}
