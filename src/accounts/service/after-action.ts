// Two rules shared by the account actions: work after an action that has happened never undoes its
// answer, and a wrong password of an authenticated user is audited like a failed login.
import type { Logger } from '../../logger.js';
import type { AuditLog } from '../audit.js';
import { AuthError } from '../errors.js';
import type { SessionClient } from '../service.js';

/**
 * Work after an action that has already happened (the session cap, audit rows): a failure here is
 * logged, and the caller still gets the answer of the action, which stands.
 */
export async function afterwards(logger: Logger, what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    logger.error({ err: error instanceof Error ? error.message : String(error) }, `account API: ${what} failed after the action succeeded`);
  }
}

/**
 * A password check of an authenticated user (password change, account deletion): a wrong password
 * is audited like a failed login. A refusal before any check (the account's failure budget spent,
 * busy) writes nothing, so a flood cannot turn into writes: rows per account stay within
 * LOGIN_FAILURES_PER_ACCOUNT per window.
 */
export async function checkedPassword(
  audit: AuditLog,
  type: 'password_change_failed' | 'account_deletion_failed',
  userId: number,
  client: SessionClient,
  check: () => Promise<void>,
): Promise<void> {
  try {
    await check();
  } catch (error) {
    if (error instanceof AuthError && error.reason === 'wrong_old_password') {
      await audit.record({ type, userId, detail: type === 'account_deletion_failed' ? 'wrong_password' : 'wrong_old_password', ip: client.ip, userAgent: client.userAgent });
    }
    throw error;
  }
}
