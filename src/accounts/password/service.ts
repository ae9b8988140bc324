// The password: a change by its owner (policy, failure budget, notice, audit). Knows nothing of HTTP.
import type { Db } from '../../db/client.js';
import type { Logger } from '../../logger.js';
import { storeNewPassword } from './store.js';
import type { NoticeThrottle } from '../../mail/notice-throttle.js';
import type { AuditLog } from '../audit/log.js';
import { assertAcceptablePassword } from '../shared/password-policy.js';
import type { AuthService } from '../sessions/auth-service.js';
import type { Authenticated, SessionClient } from '../types.js';
import type { SessionDirectory } from '../devices/directory.js';
import { afterwards } from '../shared/after-action.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';

export interface PasswordServiceDeps {
  db: Db;
  logger: Logger;
  now: () => Date;
  auth: AuthService;
  devices: SessionDirectory;
  audit: AuditLog;
  /** The one password re-check (hashing lane, failure budget, audit of a wrong one). */
  confirmation: PasswordConfirmation;
  /** "Password changed" notices; none without mail. */
  notices?: NoticeThrottle | undefined;
}

export class PasswordService {
  constructor(private readonly deps: PasswordServiceDeps) {}

  async change(auth: Authenticated, oldPassword: string, newPassword: string, client: SessionClient): Promise<void> {
    const { devices, confirmation, audit, notices, logger } = this.deps;
    assertAcceptablePassword('new_password', newPassword, auth.user);
    // For the audit: the sessions the change is about to end (the service deletes them in its statement).
    const others = await devices.publicIds(auth.user.id, auth.sessionId);
    const verifiedHash = await confirmation.confirm(auth.user, oldPassword, client, 'old_password', { type: 'password_change_failed', detail: 'wrong_old_password' });
    await storeNewPassword({ db: this.deps.db, now: this.deps.now, logger, hashing: this.deps.auth.hashing(`user:${auth.user.id}`) }, auth, verifiedHash, newPassword);
    notices?.notify({ kind: 'password_changed', account: String(auth.user.id), to: auth.user.email, at: this.deps.now() });
    await afterwards(logger, 'password change audit', async () => {
      const ended = await devices.gone(others);
      await audit.record(
        ...ended.map((id) => ({ type: 'session_ended' as const, userId: auth.user.id, sessionId: id, detail: 'password_change', ip: client.ip, userAgent: client.userAgent })),
        { type: 'password_changed', userId: auth.user.id, ip: client.ip, userAgent: client.userAgent },
      );
    });
  }
}
