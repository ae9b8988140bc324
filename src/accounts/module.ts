// The accounts area as one module: the account API under /api/v1/auth (public), the audit trail
// under /internal/v1/auth-events (internal), the envelope in which /api answers its errors, and
// what the module adds to the public OpenAPI document beyond the operations its routes generate.
import type { Context } from 'hono';
import type { Module } from '../http/module.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { AuditLog } from './audit/log.js';
import { errorResponsesAsJson } from './shared/error-table.js';
import type { AccountsDeps } from './deps.js';
import { AuthError } from './shared/auth-error.js';
import { answerOf, handleApiError } from './shared/api-errors.js';
import { envelopeError } from './shared/envelope.js';
import { AuthOutcomes } from './shared/metrics.js';
import { accountFeature } from './account/index.js';
import { auditFeature } from './audit/index.js';
import { devicesFeature } from './devices/index.js';
import { emailFeature } from './email/index.js';
import type { AccountFeature, FeatureContext } from './feature.js';
import { iceServersFeature } from './ice-servers/index.js';
import { moderationFeature } from './moderation/index.js';
import { oidcFeature } from './oidc/index.js';
import { passkeysFeature } from './passkeys/index.js';
import { passwordFeature } from './password/index.js';
import { profileFeature } from './profile/index.js';
import { reauthFeature } from './reauth/index.js';
import { resetFeature } from './reset/index.js';
import { createRouter, createRouteKit } from './shared/route-kit.js';
import { createAccountServices } from './services.js';
import { sessionsFeature } from './sessions/index.js';
import { totpFeature } from './totp/index.js';
import type { SigningKeys } from './sessions/signing-keys.js';

export type { AccountsDeps } from './deps.js';

/** The account features, in the order their routes are mounted: adding a feature is its folder and a line here. */
const FEATURES: readonly AccountFeature[] = [
  sessionsFeature,
  profileFeature,
  passwordFeature,
  resetFeature,
  devicesFeature,
  accountFeature,
  iceServersFeature,
  emailFeature,
  totpFeature,
  passkeysFeature,
  oidcFeature,
  reauthFeature,
  auditFeature,
  moderationFeature,
];

export interface AccountsModule extends Module {
  /** The audit trail (tests read it; the routes write it). */
  audit: AuditLog;
  /** The keys that sign access tokens (tests move their clock through them). */
  signingKeys: SigningKeys;
}

/**
 * @example
 * const accounts = createAccounts({ config, database, logger, authKeys, rateLimitStores })
 * const app = createApp([accounts], { logger })
 */
export function createAccounts(deps: AccountsDeps): AccountsModule {
  const now = deps.now ?? (() => new Date());
  const audit = new AuditLog({
    db: deps.database.db,
    now,
    logger: deps.logger,
    retentionDays: deps.config.auth.eventsRetentionDays,
    prunes: FEATURES.flatMap((feature) => (feature.prune ? [feature.prune] : [])),
  });
  // One set of counters for the module's rate limits and budgets.
  const stores = deps.rateLimitStores ?? memoryStores();
  // Login and refresh outcomes (auth_outcomes_total), registered by collect on the process's registry.
  const outcomes = new AuthOutcomes();
  const services = createAccountServices({ ...deps, rateLimitStores: stores, audit, now, onRefreshReuse: () => outcomes.record('refresh', 'reused') }, FEATURES);
  const kit = createRouteKit({ config: deps.config, stores, services, outcomes });
  const reauthFactors = FEATURES.flatMap((feature) => (feature.reauthFactor ? [feature.reauthFactor(services)] : []));
  const loginRefusals = FEATURES.flatMap((feature) => feature.loginRefusals ?? []);
  const context: FeatureContext = { deps, kit, services, audit, now, reauthFactors, loginRefusals };
  const api = createRouter().use(async function arrival(c, next) {
    // Before any await of this request: a refresh compares it with the rotation time of its token.
    c.set('arrivedAt', now());
    await next();
  });
  for (const feature of FEATURES) if (feature.api) api.route('/', feature.api(context));
  return {
    name: 'accounts',
    audit,
    signingKeys: services.signingKeys,
    mounts: [{ prefix: '/api/v1/auth', surface: 'public', routes: api }, ...FEATURES.flatMap((feature) => feature.mounts?.(context) ?? [])],
    errors: [
      {
        scope: '/api',
        onError: (error, c) => handleApiError(error, c, deps.logger),
        notFound: (c: Context, allowed: string[]) => {
          const { method, path } = c.req;
          if (allowed.length === 0 || allowed.includes(method)) return envelopeError(c, answerOf(new AuthError('no_such_route', `no such route: ${method} ${path}`)));
          const notAllowed = answerOf(new AuthError('method_not_allowed', `method ${method} not allowed on ${path}`));
          notAllowed.headers.Allow = allowed.join(', ');
          return envelopeError(c, notAllowed);
        },
      },
    ],
    collect(registry) {
      registry.registerMetric(outcomes.counter);
    },
    documents: {
      public: {
        info: {
          title: 'Chat backend: account API',
          description:
            'Every response is the envelope {code, message, data}; code 0 and message "ok" on success. Unknown routes answer 1004 (404, or 405 for a wrong method). Time values are yyyy-MM-dd HH:mm:ss in Asia/Shanghai.',
        },
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the access token from register, login or refresh-token' } },
        // Any operation of the public face (the health and docs endpoints included) may answer these.
        responses: errorResponsesAsJson(['rate_limited', 'internal']),
      },
    },
  };
}
