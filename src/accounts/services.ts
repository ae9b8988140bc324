// The account area's services, built once per module from its dependencies: the domain pieces
// (users and tokens, sessions, failure budgets, reset codes, mail) and the actions the routes call.
import { createMailer } from '../mail/mailer.js';
import { NoticeThrottle } from '../mail/notice-throttle.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { AccessTokens } from './sessions/access-tokens.js';
import { AccountDeletion } from './account/deletion.js';
import type { AuditLog } from './audit/log.js';
import type { AccountsDeps } from './deps.js';
import { LoginGuard } from './shared/login-guard.js';
import { MFA_CLEARED_NOTICE, Moderation } from './moderation/service.js';
import { PASSWORD_RESET_FACTORS_REMOVED, passwordChangedNotice } from './reset/mail.js';
import { PasswordReset } from './reset/service.js';
import { AuthService } from './sessions/auth-service.js';
import type { SessionClient } from './types.js';
import { SessionDirectory } from './devices/directory.js';
import { SigningKeys } from './sessions/signing-keys.js';
import { Budget } from './shared/budget.js';
import { EMAIL_CODES_PER_HOUR, EMAIL_CODES_WINDOW_MS, EmailService, emailChangedNotice } from './email/service.js';
import { PasswordConfirmation } from './shared/confirm-password.js';
import { FreshSession } from './shared/fresh-session.js';
import { ReauthService } from './reauth/service.js';
import { PasswordService } from './password/service.js';
import { SessionService } from './sessions/service.js';
import { factorNotice } from './totp/mail.js';
import { TotpService } from './totp/service.js';
import { Passkeys } from './passkeys/ceremonies.js';
import { PasskeyService, passkeyNotice } from './passkeys/service.js';
import { passkeyRemoval } from './passkeys/removal.js';
import { totpRemoval } from './totp/removal.js';

export interface AccountServices {
  /** The keys that sign access tokens (the JWKS). */
  signingKeys: SigningKeys;
  /** Users, sessions and tokens: the access token of each authenticated request is checked here. */
  auth: AuthService;
  sessions: SessionService;
  passwords: PasswordService;
  /** The reset by mailed code; none without mail (the reset endpoints then answer 1004). */
  reset: PasswordReset | undefined;
  /** The caller's sessions as devices. */
  devices: SessionDirectory;
  deletion: AccountDeletion;
  /** The account's address: verification and change by mailed codes. */
  email: EmailService;
  /** TOTP and recovery codes; the login's second step goes through `sessions`. */
  totp: TotpService;
  passkeys: PasskeyService;
  /** POST /reauth: a session proves a factor again, and is fresh for REAUTH_WINDOW_S. */
  reauth: ReauthService;
  /** Operators: look users up, ban, clear second factors (the internal surface). */
  moderation: Moderation;
}

export interface AccountServicesDeps extends AccountsDeps {
  audit: AuditLog;
  now: () => Date;
  /** Told when a rotated refresh token comes back and its session is revoked. */
  onRefreshReuse?: () => void;
}

/** @example const services = createAccountServices({ ...deps, audit, now }) */
export function createAccountServices(deps: AccountServicesDeps): AccountServices {
  const { config, audit, now, logger } = deps;
  const db = deps.database.db;
  const keys = deps.authKeys;
  if (!keys) throw new Error('the account API needs AUTH_KEY_SECRET (deps.authKeys or config.authKeySecret)');
  const signingKeys = new SigningKeys({ db, keys, now, logger, accessTokenTtl: config.auth.accessTokenTtl, rotationDays: config.auth.keyRotationDays });
  const accessTokens = new AccessTokens({ keys: signingKeys, issuer: config.auth.issuer, audience: config.auth.audience, ttl: config.auth.accessTokenTtl, now });
  const auth = new AuthService({
    db,
    accessTokens,
    accessTokenTtl: config.auth.accessTokenTtl,
    refreshTokenTtl: config.auth.refreshTokenTtl,
    now,
    logger,
    // `client`: who presented the token, passed down by refresh() (not through AsyncLocalStorage,
    // whose promise hooks, once on, cost every promise of the process).
    onRefreshReuse: (revoked, client: SessionClient | undefined) => {
      deps.onRefreshReuse?.();
      const common = { userId: revoked.userId, sessionId: revoked.sessionPublicId, ip: client?.ip, userAgent: client?.userAgent };
      void audit.record({ type: 'refresh_reuse_detected', ...common }, { type: 'session_ended', ...common, detail: 'refresh_reuse' });
    },
    refreshReuseGraceS: config.auth.refreshReuseGraceS,
    hashMaxWaitMs: config.auth.hashMaxWaitMs,
    hashCost: deps.hashCost,
  });
  const devices = new SessionDirectory({ db, now, audit });
  const stores = deps.rateLimitStores ?? memoryStores();
  // What a reset of an unproved address and an operator's clearing remove, in the audit detail's order.
  const factors = [passkeyRemoval, totpRemoval];
  const mailer = createMailer(config, logger);
  // "Password changed" notices: one per account and recipient per 10 minutes, later ones folded.
  const notices = mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => passwordChangedNotice(notice.to, notice.at, folded, notice.kind === PASSWORD_RESET_FACTORS_REMOVED) }) : undefined;
  const reset =
    mailer && notices
      ? new PasswordReset({
          db,
          now,
          logger,
          mailer,
          notices,
          audit,
          keys,
          factors,
          hashCost: deps.hashCost,
          budgets: {
            ...config.passwordReset,
            stores: { requests: stores.store('reset-requests'), requestsPerAddress: stores.store('reset-requests-address'), guesses: stores.store('reset-guesses') },
          },
        })
      : undefined;
  // Failed logins and failed password changes, per account whatever the client address: one budget.
  const failures = new LoginGuard({ limit: config.auth.failuresPerAccount, windowMs: config.auth.failureWindowS * 1000, store: stores.store('failures') });
  // The one password re-check of an authenticated user: the login's hashing lanes, wait bound and failure budget.
  const confirmation = new PasswordConfirmation({ db, auth, failures, audit });
  // Adding a factor or changing the address: a session that proved a factor within REAUTH_WINDOW_S.
  const fresh = new FreshSession({ now, windowS: config.auth.reauthWindowS });
  // Verified e-mail: codes by mail, "address changed" notices to the old address.
  const email = new EmailService({
    db,
    now,
    logger,
    mailer,
    notices: mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => emailChangedNotice(notice.to, notice.at, folded) }) : undefined,
    audit,
    keys,
    confirmation,
    fresh,
    codeRequests: new Budget({ store: stores.store('email-codes'), limit: EMAIL_CODES_PER_HOUR, windowMs: EMAIL_CODES_WINDOW_MS }),
  });
  // Notices of second-factor events (enabled, disabled, recovery code used, wrong code): the same limits.
  const factorNotices = mailer
    ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => factorNotice(notice, folded, notice.kind === 'mfa_cleared' ? MFA_CLEARED_NOTICE : undefined) })
    : undefined;
  const totp = new TotpService({ db, now, logger, keys, audit, failures, confirmation, fresh, issuer: config.auth.totpIssuer, notices: factorNotices });
  const sessions = new SessionService({ db, logger, auth, devices, audit, failures, verification: email, beforeSession: (user, client) => totp.requireSecondStep(user, client) });
  // Passkeys: their own notices ("a passkey was added / removed"), with the same limits.
  const passkeyNotices = mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => passkeyNotice(notice.kind, notice.to, notice.at, folded) }) : undefined;
  const ceremonies = config.webauthn ? new Passkeys({ db, keys, now, webauthn: config.webauthn }) : undefined;
  const passkeys = new PasskeyService({ logger, now, passkeys: ceremonies, sessions, audit, notices: passkeyNotices, fresh });
  const reauth = new ReauthService({ db, logger, now, audit, confirmation, fresh });
  return {
    signingKeys,
    auth,
    sessions,
    passwords: new PasswordService({ db, logger, now, auth, devices, audit, confirmation, notices }),
    reset,
    devices,
    deletion: new AccountDeletion({ db, audit, confirmation }),
    email,
    totp,
    passkeys,
    reauth,
    moderation: new Moderation({ db, audit, now, publish: deps.publish, factors, notices: factorNotices }),
  };
}
