// Builds a real app for a test through the service's own composition (src/compose.ts): its own
// database (in-memory PGlite, or a fresh database on the PostgreSQL server named by TEST_DATABASE_URL
// when the `postgres` project runs) and, where the test uses the relay, real mediasoup workers.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createAccounts } from '../../src/accounts/module.js';
import type { HashCost } from '../../src/accounts/passwords.js';
import { createApp, type App, type AppSurface } from '../../src/app.js';
import { compose, type ComposeOptions, type Composition } from '../../src/compose.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { createLogger, type Logger } from '../../src/logger.js';
import type { RelayEvents } from '../../src/relay/events/index.js';
import type { MediaInspection, MediaService } from '../../src/relay/media-service.js';
import { AuthKeys } from '../../src/secrets/auth-key.js';
import { watchAnswers } from './answers.js';
import { migratedSnapshot } from './pglite-snapshot.js';
import { inProcessRtcPorts } from './ports.js';

export const TEST_INTERNAL_TOKEN = 'test-internal-token-0123456789abcdef';
/** Every test app is built with an explicit AUTH_KEY_SECRET (nothing generated, no file written). */
export const TEST_AUTH_KEY_SECRET = 'test-auth-key-secret-0123456789abcdef';

/**
 * argon2id's cost in test apps: the least argon2 takes (m >= 8 KiB per lane), so the hundreds of
 * registrations and logins of the suite do not each spend the production cost. Tests that measure
 * hashing (its time, its queue, the races it opens) and those that read the production parameters
 * in a stored hash build their app with `hashCost: PASSWORD_HASH_COST`; units.test.ts checks the
 * production parameters themselves.
 */
export const TEST_HASH_COST: HashCost = { memoryCost: 64, timeCost: 1, parallelism: 1 };

/** Test files run in parallel: each worker of vitest gets its own slice of RTC ports (see ports.ts). */
export { inProcessRtcPorts as allocateRtcPorts } from './ports.js';

export function usesPostgres(): boolean {
  return process.env.TEST_DB === 'postgres';
}

/** A fresh database for one test app (migrated unless `migrate: false`); dropped by the returned close(). */
export async function openTestDatabase(options: { migrate?: boolean } = {}): Promise<{ database: Database; dbConfig: Config['database']; drop: () => Promise<void> }> {
  const migrate = options.migrate ?? true;
  if (!usesPostgres()) {
    const dbConfig = { kind: 'pglite', dataDir: undefined } as const;
    // Migrated: loaded from the suite's migrated snapshot (migrateDatabase then finds nothing to do).
    const database = await openDatabase(dbConfig, migrate ? { pgliteSnapshot: await migratedSnapshot() } : {});
    if (migrate) await migrateDatabase(database);
    return { database, dbConfig, drop: async () => {} };
  }
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DB=postgres needs TEST_DATABASE_URL');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dbConfig = { kind: 'postgres', url: url.toString() } as const;
  const database = await openDatabase(dbConfig);
  if (migrate) await migrateDatabase(database);
  return {
    database,
    dbConfig,
    drop: async () => {
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

export interface TestApp {
  app: App;
  config: Config;
  database: Database;
  /** The relay's media service and events (only when the relay is composed). */
  media: MediaService;
  /** A room's parts and piped copies (the media service's test seam), to compare with the workers' dumps. */
  roomOf: MediaInspection['room'];
  /** The bus the media publishes on, with its stream and webhook sinks: the app's. */
  events: RelayEvents;
  logger: Logger;
  internalToken: string;
  composition: Composition;
  /** argon2id's cost of the app's new hashes. */
  hashCost: HashCost;
  close(): Promise<void>;
}

export interface TestAppOptions {
  logger?: Logger;
  now?: () => Date;
  /** The areas to compose (both by default); an account test leaves the relay out: no workers start. */
  areas?: { accounts?: boolean; relay?: boolean };
  /** Recorder options of the relay (e.g. `onProcess`, to inspect or kill a recording's ffmpeg). */
  recordings?: ComposeOptions['recordings'];
  /** argon2id's cost of new hashes; TEST_HASH_COST when absent. */
  hashCost?: HashCost;
}

/** The configuration of a test app: the environment given over the test defaults. */
export function testConfig(env: Record<string, string> = {}): Config {
  const workers = Number(env.MEDIASOUP_WORKERS ?? 1);
  const ports = inProcessRtcPorts(workers);
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MEDIASOUP_WORKERS: String(workers),
    RTC_MIN_PORT: String(ports.min),
    RTC_MAX_PORT: String(ports.max),
    MEDIASOUP_LISTEN_IP: '127.0.0.1',
    INTERNAL_TOKEN: TEST_INTERNAL_TOKEN,
    AUTH_KEY_SECRET: TEST_AUTH_KEY_SECRET,
    RATE_LIMIT_AUTH_PER_MIN: '0',
    RATE_LIMIT_REFRESH_PER_MIN: '0',
    RATE_LIMIT_API_PER_MIN: '0',
    LOGIN_FAILURES_PER_ACCOUNT: '0',
    // Tests ask for many reset codes from one client; the tests of these budgets set their own.
    PASSWORD_RESET_REQUESTS_PER_SOURCE: '0',
    PASSWORD_RESET_GUESSES_PER_SOURCE: '0',
    // Many tests race dozens of logins on purpose; the tests of the bound set their own.
    PASSWORD_HASH_MAX_WAIT_MS: '60000',
    ...env,
  });
}

/**
 * @example const t = await buildTestApp({ MEDIASOUP_WORKERS: '2' }); afterAll(() => t.close())
 * @example const t = await buildTestApp({}, { areas: { relay: false } }) // accounts only, no workers
 */
export async function buildTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(env);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const { database, drop } = await openTestDatabase();
  const internalToken = config.internalToken ?? TEST_INTERNAL_TOKEN;
  const hashCost = options.hashCost ?? TEST_HASH_COST;
  let composition: Composition;
  let inspection: MediaInspection | undefined;
  try {
    composition = await compose(config, { logger, database, internalToken, hashCost, media: { inspect: (given) => (inspection = given) }, ...(options.areas ? { areas: options.areas } : {}), ...(options.now ? { now: options.now } : {}), ...(options.recordings ? { recordings: options.recordings } : {}) });
  } catch (error) {
    await database.close();
    await drop();
    throw error;
  }
  const { relay } = composition;
  return {
    app: watchAnswers(composition.app(), composition.modules),
    config,
    database,
    // Tests that leave the relay out never touch these; a mistaken use fails loudly.
    media: relay?.media ?? (missing('media') as MediaService),
    roomOf: (routerId) => (inspection ?? (missing('media') as MediaInspection)).room(routerId),
    events: relay?.events ?? (missing('events') as RelayEvents),
    logger,
    internalToken,
    composition,
    hashCost,
    async close() {
      composition.release();
      await composition.stop({ deadlineMs: 10_000 });
      await drop();
    },
  };
}

/**
 * Another app over the same database and relay as `t`, with the account API built from `config`
 * (its own budgets and memory counters) and logging to `logger`: what a second instance would be.
 * @example const strict = appWith(t, { config: { ...t.config, auth: { ...t.config.auth, failuresPerAccount: 2 } } })
 * @example const production = appWith(t, { hashCost: PASSWORD_HASH_COST }) // argon2id at its production cost
 */
export function appWith(t: TestApp, overrides: { config?: Config; logger?: Logger; surface?: AppSurface; now?: () => Date; hashCost?: HashCost }): App {
  const config = overrides.config ?? t.config;
  const logger = overrides.logger ?? t.logger;
  const modules = t.composition.modules.map((module) =>
    module.name === 'accounts'
      ? createAccounts({ config, database: t.database, logger, authKeys: new AuthKeys(config.authKeySecret!), hashCost: overrides.hashCost ?? t.hashCost, ...(overrides.now ? { now: overrides.now } : {}) })
      : module,
  );
  return createApp(modules, { logger, internalToken: t.internalToken, ...(overrides.surface ? { surface: overrides.surface } : {}) });
}

function missing(what: string): unknown {
  return new Proxy({}, { get: (_target, key) => { throw new Error(`this test app composes no relay: ${what}.${String(key)}`); } });
}
