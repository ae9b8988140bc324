// The account itself: its deletion, confirmed by the password and spending the account's failure
// budget like a login. Knows nothing of HTTP.
import type { AccountDeletion } from '../account.js';
import type { AuditLog } from '../audit.js';
import { userKey, type LoginGuard } from '../login-guard.js';
import type { Authenticated, SessionClient } from '../service.js';
import { checkedPassword } from './after-action.js';

export class AccountService {
  constructor(private readonly deps: { deletion: AccountDeletion; audit: AuditLog; failures: LoginGuard }) {}

  delete(auth: Authenticated, password: string, client: SessionClient): Promise<void> {
    const { user } = auth;
    // A password check like PUT /password: it spends the same per-account budget.
    return checkedPassword(this.deps.audit, 'account_deletion_failed', user.id, client, () =>
      this.deps.failures.run([userKey(user.id)], () => this.deps.deletion.delete(user.id, password)),
    );
  }
}
