// THE wiring, for server.ts and the tests alike: config + database -> shared stores -> the modules
// asked for -> an app per listener. A test composes only the areas it uses (an account test needs a
// database, not mediasoup workers).
import type { AccountsDeps, AccountsModule } from './accounts/module.js';
import { createAccounts } from './accounts/module.js';
import { createApp, type App, type AppSurface } from './app.js';
import type { Config } from './config/index.js';
import { ACCOUNT_EVENT_TYPES, accountEventSchema } from './accounts/events.js';
import type { Database } from './db/client.js';
import { createDocs } from './docs/routes.js';
import type { Module } from './http/module.js';
import { memoryStores, redisStores, type RateLimitStores } from './http/rate-limit-store.js';
import type { Logger } from './logger.js';
import { Metrics } from './observability/metrics.js';
import { createObservability } from './observability/module.js';
import { createRelay, type RelayDeps, type RelayModule } from './relay/module.js';
import { AuthKeys } from './secrets/auth-key.js';

export interface ComposeOptions {
  logger: Logger;
  /** Opened and migrated by the caller (server.ts, or a test's own database). */
  database: Database;
  /** Which areas to build; both by default. */
  areas?: { accounts?: boolean; relay?: boolean };
  /** The internal token in force (config's, or the one generated at start-up). */
  internalToken: string;
  /** Subkeys of the AUTH_KEY_SECRET in force; made from `config.authKeySecret` when absent. */
  authKeys?: AuthKeys;
  /** Where rate limits count; from config (Redis with its fallback, or memory) when absent. */
  rateLimitStores?: RateLimitStores;
  /** Injected so tests can move time; defaults to the wall clock. */
  now?: () => Date;
  /** argon2id's cost of new password hashes; the production parameters when absent (tests give a lower one). */
  hashCost?: AccountsDeps['hashCost'];
  /** Engine options of the relay (tests shorten the worker backoff or the engine deadline). */
  media?: RelayDeps['media'];
  /** Recorder options of the relay (tests are told of each recording's ffmpeg). */
  recordings?: RelayDeps['recordings'];
}

export interface Composition {
  config: Config;
  database: Database;
  metrics: Metrics;
  rateLimitStores: RateLimitStores;
  internalToken: string;
  /** Every module composed, in mount order. */
  modules: Module[];
  accounts: AccountsModule | undefined;
  relay: RelayModule | undefined;
  /** A new app over the modules, for one listener. */
  app(surface?: AppSurface): App;
  /** /readyz's checks: the database, then each module's. */
  readiness(): Promise<Record<string, string>>;
  /** Shutdown, first step (before the listeners close): ends what would hold them open. */
  release(): void;
  /** Shutdown, last step: the modules, the database and the rate-limit stores, within `deadlineMs`. */
  stop(options?: { deadlineMs?: number }): Promise<void>;
}

/**
 * @example
 * const composition = await compose(config, { logger, database, internalToken })
 * serve({ fetch: composition.app().fetch, port: config.port })
 */
export async function compose(config: Config, options: ComposeOptions): Promise<Composition> {
  const { logger, database } = options;
  const areas = { accounts: options.areas?.accounts ?? true, relay: options.areas?.relay ?? true };
  const metrics = new Metrics();
  const ownStores = options.rateLimitStores === undefined;
  const rateLimitStores =
    options.rateLimitStores ??
    (config.rateLimit.redisUrl ? redisStores({ url: config.rateLimit.redisUrl, logger, onFallback: () => metrics.recordRateLimitFallback() }) : memoryStores());
  metrics.watchRateLimitMode(() => rateLimitStores.mode());
  // A Redis that is not there yet is not waited for: limits start in the per-instance fallback.
  if (ownStores) await rateLimitStores.ready(1000);

  const authKeys = areas.accounts ? (options.authKeys ?? (config.authKeySecret !== undefined ? new AuthKeys(config.authKeySecret) : undefined)) : undefined;
  if (areas.accounts && !authKeys) throw new Error('the account API needs AUTH_KEY_SECRET (options.authKeys or config.authKeySecret)');
  const relay = areas.relay
    ? await createRelay({
        config,
        logger,
        rateLimitMode: () => rateLimitStores.mode(),
        database,
        ...(options.internalToken ? { internalToken: options.internalToken } : {}),
        ...(options.media ? { media: options.media } : {}),
        ...(options.recordings ? { recordings: options.recordings } : {}),
        // The account area's events are written to the event log by its own statements (both or
        // neither with the change); the relay's stream and webhook, which follow the log, carry and
        // document them.
        ...(areas.accounts ? { otherEvents: [{ types: ACCOUNT_EVENT_TYPES, schema: accountEventSchema }] } : {}),
      })
    : undefined;

  let accounts: AccountsModule | undefined;
  if (areas.accounts && authKeys) {
    accounts = createAccounts({ config, database, logger, authKeys, rateLimitStores, ...(options.now ? { now: options.now } : {}), ...(options.hashCost ? { hashCost: options.hashCost } : {}) });
  }

  const modules: Module[] = [];
  const readiness = async () => {
    const checks: Record<string, string> = {
      database: await database.ping().then(
        () => 'ok',
        () => 'unavailable',
      ),
    };
    for (const module of modules) Object.assign(checks, await module.ready?.());
    return checks;
  };
  modules.push(createObservability({ metrics, readiness }));
  if (accounts) modules.push(accounts);
  if (relay) modules.push(relay);
  modules.push(createDocs(() => modules));
  for (const module of modules) module.collect?.(metrics.registry);

  return {
    config,
    database,
    metrics,
    rateLimitStores,
    internalToken: options.internalToken,
    modules,
    accounts,
    relay,
    app: (surface) =>
      createApp(modules, { logger, internalToken: options.internalToken, metrics, ...(config.cors ? { cors: config.cors } : {}), ...(surface ? { surface } : {}) }),
    readiness,
    release() {
      for (const module of modules) module.release?.();
    },
    async stop({ deadlineMs = 3500 } = {}) {
      // The modules first: the relay stores its last events (the shutdown's closes) in the event log,
      // which needs the database; each module's stop is bounded by the deadline.
      await Promise.allSettled(modules.map((module) => module.stop?.({ deadlineMs }) ?? Promise.resolve()));
      await Promise.allSettled([database.close(), ownStores ? rateLimitStores.close() : Promise.resolve()]);
    },
  };
}
