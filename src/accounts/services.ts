// The account area's services: the parts every feature shares (signing keys, users and tokens,
// sessions as devices, failure budgets, mail and its notice limiters), built once per module; then
// each feature builds its own services from them (its `services` in its index.ts), in the feature
// list's order.
import { createMailer } from '../mail/mailer.js';
import { NoticeThrottle } from '../mail/notice-throttle.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { AccessTokens } from './sessions/access-tokens.js';
import type { AccountFeature, AccountServices, AccountServicesDeps, ServiceContext } from './feature.js';
import { LoginGuard } from './shared/login-guard.js';
import { PASSWORD_RESET_FACTORS_REMOVED, passwordChangedNotice } from './reset/mail.js';
import { AuthService } from './sessions/auth-service.js';
import type { SessionClient } from './types.js';
import { SessionDirectory } from './devices/directory.js';
import { SigningKeys } from './sessions/signing-keys.js';
import { PasswordConfirmation } from './shared/confirm-password.js';
import { FreshSession } from './shared/fresh-session.js';
import { NO_ADDRESS_PROOF } from './shared/address-proof.js';
import { factorNotice, type FactorNoticeText } from './shared/factor-notice.js';

/** @example const services = createAccountServices({ ...deps, audit, now }, FEATURES) */
export function createAccountServices(deps: AccountServicesDeps, features: readonly AccountFeature[]): AccountServices {
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
  const factors = features
    .flatMap((feature) => (feature.factorRemoval ? [feature.factorRemoval] : []))
    .sort((a, b) => a.order - b.order);
  const signInMethods = features.flatMap((feature) => (feature.signInMethod ? [feature.signInMethod] : []));
  // How the owner's proof of the address is kept, by the one feature that keeps it.
  const proofs = features.flatMap((feature) => (feature.addressProof ? [feature.addressProof] : []));
  if (proofs.length > 1) throw new Error('more than one account feature keeps the proof of the address');
  const addressProof = proofs[0] ?? NO_ADDRESS_PROOF;
  const mailer = createMailer(config, logger);
  // "Password changed" notices: one per account and recipient per 10 minutes, later ones folded.
  const notices = mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => passwordChangedNotice(notice.to, notice.at, folded, notice.kind === PASSWORD_RESET_FACTORS_REMOVED) }) : undefined;
  // Failed logins and failed password changes, per account whatever the client address: one budget.
  const failures = new LoginGuard({ limit: config.auth.failuresPerAccount, windowMs: config.auth.failureWindowS * 1000, store: stores.store('failures') });
  // The one password re-check of an authenticated user: the login's hashing lanes, wait bound and failure budget.
  const confirmation = new PasswordConfirmation({ db, auth, failures, audit });
  // Adding a factor or changing the address: a session that proved a factor within REAUTH_WINDOW_S.
  const fresh = new FreshSession({ now, windowS: config.auth.reauthWindowS });
  // Notices of second-factor events, whichever feature's (enabled, disabled, recovery code used, wrong
  // code, cleared by an operator): one limiter, so they share their windows.
  const texts: Record<string, FactorNoticeText> = Object.fromEntries(features.flatMap((feature) => Object.entries(feature.factorNoticeTexts ?? {})));
  const factorNotices = mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => factorNotice(notice, folded, texts[notice.kind]!) }) : undefined;
  const context: ServiceContext = {
    deps,
    db,
    keys,
    now,
    logger,
    audit,
    stores,
    mailer,
    notices,
    factorNotices,
    factors,
    signInMethods,
    addressProof,
    failures,
    confirmation,
    fresh,
    hooks: { afterRegistration: [], beforeSession: [] },
  };
  const services = { signingKeys, auth, devices } as AccountServices;
  for (const feature of features) if (feature.services) Object.assign(services, feature.services(context, services));
  return services;
}
