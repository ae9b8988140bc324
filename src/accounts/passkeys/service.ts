// Passkeys as the account API offers them: the ceremonies (src/accounts/passkeys.ts), the audit rows,
// the owner's notices, and the sign-in through SessionService.signIn. Knows nothing of HTTP.
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Logger } from '../../logger.js';
import type { NoticeThrottle } from '../../mail/notice-throttle.js';
import type { AuditLog } from '../audit/log.js';
import type { AuthenticationResponseBody, RegistrationResponseBody } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { PasskeyLoginError, type Passkeys, type StoredPasskey } from './ceremonies.js';
import type { Authenticated, SessionClient, TokenSet, User } from '../types.js';
import { afterwards } from '../shared/after-action.js';
import type { FreshSession } from '../shared/fresh-session.js';
import type { SessionService } from '../sessions/service.js';

export interface PasskeyServiceDeps {
  logger: Logger;
  now: () => Date;
  /** Undefined: passkeys are off (production without WEBAUTHN_RP_ID); every action answers 1004. */
  passkeys: Passkeys | undefined;
  sessions: SessionService;
  audit: AuditLog;
  /** "A passkey was added / removed" notices; none without mail. */
  notices?: NoticeThrottle | undefined;
  /** Adding a passkey needs a verified address and a fresh session. */
  fresh: FreshSession;
}

export class PasskeyService {
  constructor(private readonly deps: PasskeyServiceDeps) {}

  get available(): boolean {
    return this.deps.passkeys !== undefined;
  }

  /** Options naming the caller's own passkeys, with a challenge only a re-authentication of this user can use. */
  reauthOptions(auth: Authenticated): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return this.passkeys().reauthOptions(auth.user);
  }

  /** A re-authentication by passkey: only an assertion of `user`'s own, for a re-authentication challenge. */
  async reauthenticate(user: User, assertion: AuthenticationResponseBody, failed: (detail: string) => Promise<void>): Promise<'passkey'> {
    const passkeys = this.passkeys();
    try {
      await passkeys.login(assertion, user.id);
    } catch (error) {
      if (!(error instanceof PasskeyLoginError)) throw error;
      await failed(`passkey_${error.detail}`);
      throw new AuthError('passkey_reauth_refused');
    }
    return 'passkey';
  }

  /** AuthError `email_not_verified` or `reauthentication_required` (FreshSession) before anything. */
  registrationOptions(auth: Authenticated): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const passkeys = this.passkeys();
    this.deps.fresh.requireForNewFactor(auth);
    return passkeys.registrationOptions(auth.user);
  }

  /** Checked again here: the session must still be fresh when the passkey is stored. */
  async register(auth: Authenticated, response: RegistrationResponseBody, name: string | undefined, client: SessionClient): Promise<StoredPasskey> {
    this.passkeys();
    this.deps.fresh.requireForNewFactor(auth);
    const stored = await this.passkeys().register(auth.user, response, name);
    this.deps.notices?.notify({ kind: 'passkey_added', account: String(auth.user.id), to: auth.user.email, at: this.deps.now() });
    await this.deps.audit.record({ type: 'passkey_added', userId: auth.user.id, sessionId: auth.sessionPublicId, detail: stored.publicId, ip: client.ip, userAgent: client.userAgent });
    return stored;
  }

  loginOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return this.passkeys().loginOptions();
  }

  /**
   * Signs in with an assertion: AuthError `passkey_login_refused` (the reason in the audit row
   * passkey_login_failed), or `account_banned` (2006) once the passkey verified, as a password login.
   */
  async login(response: AuthenticationResponseBody, client: SessionClient): Promise<{ user: User; tokens: TokenSet }> {
    const passkeys = this.passkeys();
    let user: User;
    try {
      ({ user } = await passkeys.login(response));
    } catch (error) {
      if (!(error instanceof PasskeyLoginError)) throw error;
      await this.deps.audit.record({ type: 'passkey_login_failed', userId: error.userId, detail: error.detail, ip: client.ip, userAgent: client.userAgent });
      throw new AuthError('passkey_login_refused');
    }
    try {
      return await this.deps.sessions.signIn(user, client, 'passkey');
    } catch (error) {
      // Banned: 2006, as a password login. Deleted since the passkey verified (its passkeys went with
      // it): as an unknown credential.
      const reason = error instanceof AuthError && (error.reason === 'account_banned' || error.reason === 'no_such_account') ? error.reason : undefined;
      if (reason) {
        await afterwards(this.deps.logger, 'passkey login audit', () =>
          this.deps.audit.record({ type: 'passkey_login_failed', userId: user.id, detail: reason === 'account_banned' ? reason : 'unknown_credential', ip: client.ip, userAgent: client.userAgent }),
        );
      }
      if (reason === 'no_such_account') throw new AuthError('passkey_login_refused');
      throw error;
    }
  }

  list(auth: Authenticated): Promise<StoredPasskey[]> {
    return this.passkeys().list(auth.user.id);
  }

  async remove(auth: Authenticated, publicId: string, client: SessionClient): Promise<void> {
    const removed = await this.passkeys().remove(auth.user.id, publicId);
    this.deps.notices?.notify({ kind: 'passkey_removed', account: String(auth.user.id), to: auth.user.email, at: this.deps.now() });
    await this.deps.audit.record({ type: 'passkey_removed', userId: auth.user.id, sessionId: auth.sessionPublicId, detail: removed.publicId, ip: client.ip, userAgent: client.userAgent });
  }

  private passkeys(): Passkeys {
    if (!this.deps.passkeys) throw new AuthError('passkeys_disabled');
    return this.deps.passkeys;
  }
}

/** The notice of a passkey added to or removed from the account, or the summary of those folded into one window. */
export function passkeyNotice(kind: string, to: string, at: Date, folded?: { count: number; first: Date; last: Date }) {
  const time = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const what = kind === 'passkey_removed' ? 'removed from' : 'added to';
  const subject = kind === 'passkey_removed' ? 'A passkey was removed from your account' : 'A passkey was added to your account';
  const first = folded
    ? folded.count === 1
      ? `Another passkey was ${what} your chat account on ${time(folded.last)}.`
      : `${folded.count} more passkeys were ${what} your chat account between ${time(folded.first)} and ${time(folded.last)}.`
    : `A passkey was ${what} your chat account on ${time(at)}.`;
  return {
    to,
    subject,
    text: [
      first,
      '',
      ...(folded ? ['(These notices are sent at most once every 10 minutes; this one sums up the changes since the last.)', ''] : []),
      'If this was not you, sign in, remove the passkeys you do not know, change your password and end the devices you do not know.',
    ].join('\n'),
  };
}
