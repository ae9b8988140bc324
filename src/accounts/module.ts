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
import { envelopeError } from './shared/api-error.js';
import { AuthOutcomes } from './shared/metrics.js';
import { accountRoutes } from './account/routes.js';
import { auditRoutes } from './audit/routes.js';
import { devicesRoutes } from './devices/routes.js';
import { emailRoutes } from './email/routes.js';
import { iceServersRoutes } from './ice-servers/routes.js';
import { createRouter, createRouteKit } from './shared/route-kit.js';
import { passkeysRoutes } from './passkeys/routes.js';
import { passwordRoutes } from './password/routes.js';
import { reauthRoutes } from './reauth/routes.js';
import { profileRoutes } from './profile/routes.js';
import { sessionRoutes } from './sessions/routes.js';
import { introspectionRoutes, jwksRoutes } from './sessions/tokens-routes.js';
import { totpRoutes } from './totp/routes.js';
import { moderationRoutes } from './moderation/routes.js';
import { createAccountServices } from './services.js';
import type { SigningKeys } from './sessions/signing-keys.js';

export type { AccountsDeps } from './deps.js';

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
  const audit = new AuditLog({ db: deps.database.db, now, logger: deps.logger, retentionDays: deps.config.auth.eventsRetentionDays, publish: deps.publish });
  // One set of counters for the module's rate limits and budgets.
  const stores = deps.rateLimitStores ?? memoryStores();
  // Login and refresh outcomes (auth_outcomes_total), registered by collect on the process's registry.
  const outcomes = new AuthOutcomes();
  const services = createAccountServices({ ...deps, rateLimitStores: stores, audit, now, onRefreshReuse: () => outcomes.record('refresh', 'reused') });
  const kit = createRouteKit({ config: deps.config, stores, services, outcomes });
  const api = createRouter()
    .use(async function arrival(c, next) {
      // Before any await of this request: a refresh compares it with the rotation time of its token.
      c.set('arrivedAt', now());
      await next();
    })
    .route('/', sessionRoutes(kit, services.sessions))
    .route('/', profileRoutes(kit, services.profile))
    .route('/', passwordRoutes(kit, services.passwords))
    .route('/', devicesRoutes(kit, services.devices))
    .route('/', accountRoutes(kit, services.account))
    .route('/', iceServersRoutes(kit, services.iceServers))
    // Issue 31: verified e-mail and changing the address.
    .route('/', emailRoutes(kit, services.email))
    // issue 31, totp
    .route('/', totpRoutes(kit, services.totp, services.sessions))
    // issue 31, passkeys
    .route('/', passkeysRoutes(kit, services.passkeys))
    .route('/', reauthRoutes(kit, services.reauth));
  return {
    name: 'accounts',
    audit,
    signingKeys: services.signingKeys,
    mounts: [
      { prefix: '/api/v1/auth', surface: 'public', routes: api },
      { prefix: '/.well-known', surface: 'public', routes: jwksRoutes(services.signingKeys) },
      { prefix: '/internal', surface: 'internal', routes: auditRoutes(audit) },
      { prefix: '/internal', surface: 'internal', routes: introspectionRoutes(services.auth, { issuer: deps.config.auth.issuer, audience: deps.config.auth.audience }) },
      { prefix: '/internal', surface: 'internal', routes: moderationRoutes(services.moderation, now) },
    ],
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
