// What an account feature gives the module (module.ts lists them): its routes under /api/v1/auth and
// its mounts elsewhere, built from the area's services and route kit; the services it builds from the
// shared ones (services.ts), and its parts in what the features share (second factors, notices).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Mount } from '../http/module.js';
import type { AuditLog, PruneDeadRows } from './audit/log.js';
import type { AccountsDeps } from './deps.js';
import type { AuthEnv, RouteKit } from './shared/route-kit.js';
import type { FactorRemoval, ReauthFactor } from './shared/second-factors.js';
import type { AddressProof } from './shared/address-proof.js';
import type { SignInMethod } from './shared/sign-in-methods.js';
import type { ErrorRow } from './shared/error-table.js';
import type { Db } from '../db/client.js';
import type { RateLimitStores } from '../http/rate-limit-store.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { NoticeThrottle } from '../mail/notice-throttle.js';
import type { AuthKeys } from '../secrets/auth-key.js';
import type { SessionDirectory } from './devices/directory.js';
import type { AuthService } from './sessions/auth-service.js';
import type { SigningKeys } from './sessions/signing-keys.js';
import type { PasswordConfirmation } from './shared/confirm-password.js';
import type { FactorNoticeText } from './shared/factor-notice.js';
import type { FreshSession } from './shared/fresh-session.js';
import type { LoginGuard } from './shared/login-guard.js';
import type { SessionClient, User } from './types.js';
import type { AuthMethod } from './devices/contract.js';

/**
 * The area's services: the shared ones here; each feature adds its own to this interface from its
 * folder (`declare module '../feature.js'`) and builds them in its `services`.
 */
export interface AccountServices {
  /** The keys that sign access tokens (the JWKS). */
  signingKeys: SigningKeys;
  /** Users, sessions and tokens: the access token of each authenticated request is checked here. */
  auth: AuthService;
  /** The caller's sessions as devices. */
  devices: SessionDirectory;
}

/** What the features call between the right password and a session, and after a registration. */
export interface SessionHooks {
  /** After a registration (e.g. mailing a first code); a failure is logged, the registration stands. */
  afterRegistration: ((user: User) => Promise<void>)[];
  /**
   * Between the first factor (`method`: the password, a provider) and the session: throws the answer
   * of a login that needs a second step.
   */
  beforeSession: ((user: User, client: SessionClient, method: AuthMethod) => Promise<void>)[];
}

export interface AccountServicesDeps extends AccountsDeps {
  audit: AuditLog;
  now: () => Date;
  /** Told when a rotated refresh token comes back and its session is revoked. */
  onRefreshReuse?: () => void;
}

/** What a feature builds its services from: the module's dependencies and the shared parts. */
export interface ServiceContext {
  deps: AccountServicesDeps;
  db: Db;
  keys: AuthKeys;
  now: () => Date;
  logger: Logger;
  audit: AuditLog;
  stores: RateLimitStores;
  /** None without mail. */
  mailer: Mailer | undefined;
  /** "Password changed" notices (one limiter for the password change and the reset); none without mail. */
  notices: NoticeThrottle | undefined;
  /** Notices of second-factor events, every feature's kinds in one limiter; none without mail. */
  factorNotices: NoticeThrottle | undefined;
  /** What removing a user's second factors removes, in the audit detail's order. */
  factors: readonly FactorRemoval[];
  /** The ways to sign in the features hold besides the password. */
  signInMethods: readonly SignInMethod[];
  /** How the owner's proof of the address is kept (NO_ADDRESS_PROOF when no feature keeps it). */
  addressProof: AddressProof;
  failures: LoginGuard;
  confirmation: PasswordConfirmation;
  fresh: FreshSession;
  /** Filled by the features as they are built, called by the sessions' service. */
  hooks: SessionHooks;
}

export interface FeatureContext {
  deps: AccountsDeps;
  kit: RouteKit;
  services: AccountServices;
  audit: AuditLog;
  now: () => Date;
  /** The second factors re-authentication accepts besides the password, in the feature list's order. */
  reauthFactors: readonly ReauthFactor[];
  /** What the features answer a login instead of a session after the right password (documented on POST /login). */
  loginRefusals: readonly ErrorRow[];
}

export interface AccountFeature {
  /** The feature's routes, mounted under /api/v1/auth (in the envelope's error shape). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema of routes may be mounted
  api?(context: FeatureContext): OpenAPIHono<AuthEnv, any, any>;
  /** Its mounts outside /api (the JWKS, the internal surface). */
  mounts?(context: FeatureContext): Mount[];
  /** What it answers a login instead of a session after the right password (a second step). */
  loginRefusals?: readonly ErrorRow[];
  /** A second factor: what re-authentication accepts of it. */
  reauthFactor?(services: AccountServices): ReauthFactor;
  /** Builds its services (`built`: those of the features before it in the list, and the shared ones). */
  services?(context: ServiceContext, built: AccountServices): Partial<AccountServices>;
  /** A second factor: its part in removing a user's second factors. */
  factorRemoval?: FactorRemoval;
  /** A way to sign in besides the password, which an account may be left with alone. */
  signInMethod?: SignInMethod;
  /** How it keeps the owner's proof of the address, for the features that prove it too (one feature at most). */
  addressProof?: AddressProof;
  /** The texts of its kinds of second-factor notice, by kind. */
  factorNoticeTexts?: Readonly<Record<string, FactorNoticeText>>;
  /** Deletes its short-lived rows (codes, challenges) once long dead. */
  prune?: PruneDeadRows;
}
