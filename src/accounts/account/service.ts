// The account itself: its deletion, confirmed by the password through the one re-check of an
// authenticated user (the login's hashing lanes and failure budget). Knows nothing of HTTP.
import type { AccountDeletion } from './deletion.js';
import type { Authenticated, SessionClient } from '../types.js';
import type { PasswordConfirmation } from '../shared/confirm-password.js';

export class AccountService {
  constructor(private readonly deps: { deletion: AccountDeletion; confirmation: PasswordConfirmation }) {}

  async delete(auth: Authenticated, password: string, client: SessionClient): Promise<void> {
    const { user } = auth;
    const verifiedHash = await this.deps.confirmation.confirm(user, password, client, 'password', { type: 'account_deletion_failed', detail: 'wrong_password' });
    await this.deps.deletion.delete(user.id, verifiedHash);
  }
}
