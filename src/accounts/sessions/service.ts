// Sessions as the account API opens and ends them: register, log in, refresh, log out, with the
// password rules, the per-account failure budget, the session cap and the audit trail. Knows nothing of HTTP.
import type { Db } from '../../db/client.js';
import type { Logger } from '../../logger.js';
import { userIdOfAccount } from '../account/deletion.js';
import { normaliseAccount, type AuditLog } from '../audit/log.js';
import type { AuthMethod } from '../devices/contract.js';
import type { RegisterBody } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import type { LoginGuard } from '../shared/login-guard.js';
import { assertAcceptablePassword } from '../shared/password-policy.js';
import type { AuthService } from './auth-service.js';
import type { Authenticated, SessionClient, TokenSet, User } from '../types.js';
import type { LogoutScope, SessionDirectory } from '../devices/directory.js';
import { afterwards } from '../shared/after-action.js';

export interface SessionServiceDeps {
  db: Db;
  logger: Logger;
  auth: AuthService;
  devices: SessionDirectory;
  audit: AuditLog;
  failures: LoginGuard;
  /** Mails the first e-mail verification code after a registration. */
  verification?: { registered(user: User): Promise<void> };
  /**
   * Between the right password and the session: throws the answer of a login whose user must prove a
   * second factor first (a challenge instead of a session). The factor's route then opens the session.
   * `method`: how the first factor was proven (the second step's method names it).
   */
  beforeSession?: ((user: User, client: SessionClient, method: AuthMethod) => Promise<void>) | undefined;
}

export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  async register(body: RegisterBody, client: SessionClient): Promise<{ user: User; tokens: TokenSet }> {
    assertAcceptablePassword('password', body.password, body);
    const result = await this.deps.auth.register({ username: body.username, email: body.email, password: body.password, nickname: body.nickname }, client);
    await this.opened('registered', result.user.id, result.sessionPublicId, client);
    const { verification, logger } = this.deps;
    if (verification) await afterwards(logger, 'verification code at registration', () => verification.registered(result.user));
    return result;
  }

  async login(account: string, password: string, client: SessionClient): Promise<{ user: User; tokens: TokenSet }> {
    const { auth, failures, audit, db } = this.deps;
    let user;
    try {
      const found = await auth.findAccount(account);
      user = await failures.run([found.key], () => auth.checkPassword(found, password));
    } catch (error) {
      // A refusal before any password was checked (busy, or the account's failure budget spent) is
      // no authentication event: counted in metrics, not written, so a flood cannot turn into writes.
      if (error instanceof AuthError && error.reason !== 'server_busy' && error.reason !== 'too_many_failures') {
        const userId = error.reason === 'no_such_account' ? undefined : await userIdOfAccount(db, account).catch(() => undefined);
        await audit.record({ type: 'login_failed', userId, account: normaliseAccount(account), detail: error.reason, ip: client.ip, userAgent: client.userAgent });
      }
      throw error;
    }
    return this.afterFirstFactor(user, client, 'password', { passwordHash: user.passwordHash, account: normaliseAccount(account) });
  }

  /**
   * What every login does once its first factor is proven (a password, a provider's ID token) and
   * the ban checked: the features' second step (a user with TOTP on gets 2007 and a challenge
   * instead of a session), then the session.
   */
  async afterFirstFactor(user: User, client: SessionClient, method: AuthMethod, proof: { passwordHash?: string; account?: string } = {}): Promise<{ user: User; tokens: TokenSet }> {
    await this.deps.beforeSession?.(user, client, method);
    return this.signIn(user, client, method, proof);
  }

  /**
   * Opens a session for a user whose identity was proven by `method`, then applies the session cap and
   * writes the `login_succeeded` audit row (its detail: the method). Every way of signing in ends here.
   * `passwordHash`: open only if it is still the user's password (see AuthService.openSession).
   */
  async signIn(
    user: User,
    client: SessionClient,
    method: AuthMethod,
    { passwordHash, account }: { passwordHash?: string; account?: string } = {},
  ): Promise<{ user: User; tokens: TokenSet }> {
    const result = await this.deps.auth.openSession(user, client, method, { passwordHash });
    await this.opened('login_succeeded', result.user.id, result.sessionPublicId, client, account, method);
    return result;
  }

  /** `arrivedAt`: when the request arrived, compared with the rotation time of the token. */
  refresh(refreshToken: string, arrivedAt: Date, client: SessionClient): Promise<TokenSet> {
    return this.deps.auth.refresh(refreshToken, arrivedAt, client);
  }

  async logout(auth: Authenticated, scope: LogoutScope, client: SessionClient): Promise<void> {
    const ended = await this.deps.devices.endByScope(auth.user.id, auth.sessionId, scope);
    await this.deps.audit.record(
      ...ended.map((id) => ({ type: 'session_ended' as const, userId: auth.user.id, sessionId: id, detail: 'user', ip: client.ip, userAgent: client.userAgent })),
    );
  }

  /** After register or login: the session cap, and the audit row with the new session's public id. */
  private opened(type: 'registered' | 'login_succeeded', userId: number, sessionPublicId: string, client: SessionClient, account?: string, method?: AuthMethod) {
    const { devices, audit, logger } = this.deps;
    return afterwards(logger, type, async () => {
      const session = await devices.byPublicId(sessionPublicId);
      const trimmed = session ? await devices.trimToCap(userId, session.id) : [];
      await audit.record(
        { type, userId, sessionId: session?.publicId, account, detail: method, ip: client.ip, userAgent: client.userAgent },
        ...trimmed.map((id) => ({ type: 'session_ended' as const, userId, sessionId: id, detail: 'session_limit', ip: client.ip, userAgent: client.userAgent })),
      );
    });
  }
}
