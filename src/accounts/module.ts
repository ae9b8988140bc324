// The accounts area as one module: the account API under /api/v1/auth (public), the audit trail
// under /internal/v1/auth-events (internal), and the envelope in which /api answers its errors.
import type { Context } from 'hono';
import type { Module } from '../http/module.js';
import { AuditLog } from './audit.js';
import { createAuthEventsApp } from './audit-routes.js';
import type { AccountsDeps } from './deps.js';
import { handleApiError } from './http/api-errors.js';
import { ApiCode, ApiError, envelopeError } from './http/envelope.js';
import { createAuthApp } from './routes.js';
import { createAccountServices } from './service/index.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { accountApiDocument, legacyDocumentPart } from '../docs/openapi.js';

export type { AccountsDeps } from './deps.js';

export interface AccountsModule extends Module {
  /** The audit trail (tests read it; the routes write it). */
  audit: AuditLog;
}

/**
 * @example
 * const accounts = createAccounts({ config, database, logger, authKeys, rateLimitStores })
 * const app = createApp([accounts], { logger })
 */
export function createAccounts(deps: AccountsDeps): AccountsModule {
  const now = deps.now ?? (() => new Date());
  const audit = new AuditLog({ db: deps.database.db, now, logger: deps.logger, retentionDays: deps.config.auth.eventsRetentionDays });
  // One set of counters for the module's rate limits and budgets.
  const rateLimitStores = deps.rateLimitStores ?? memoryStores();
  const services = createAccountServices({ ...deps, rateLimitStores, audit, now, onRefreshReuse: () => deps.metrics?.recordAuth('refresh', 'reused') });
  return {
    name: 'accounts',
    audit,
    mounts: [
      { prefix: '/api/v1/auth', surface: 'public', routes: createAuthApp({ ...deps, rateLimitStores }, services) },
      { prefix: '/internal', surface: 'internal', routes: createAuthEventsApp(audit) },
    ],
    errors: [
      {
        scope: '/api',
        onError: (error, c) => handleApiError(error, c, deps.logger),
        notFound: (c: Context, allowed: string[]) => {
          const { method, path } = c.req;
          return allowed.length > 0 && !allowed.includes(method)
            ? envelopeError(c, new ApiError(ApiCode.NOT_FOUND, `method ${method} not allowed on ${path}`, 405, { Allow: allowed.join(', ') }))
            : envelopeError(c, new ApiError(ApiCode.NOT_FOUND, `no such route: ${method} ${path}`, 404));
        },
      },
    ],
    // Until the routes are declared with createRoute, the hand-kept document of the account API.
    documents: { public: legacyDocumentPart(accountApiDocument()) },
  };
}
