// Builds a real app for a test: its own database (in-memory PGlite, or a fresh database on the
// PostgreSQL server named by TEST_DATABASE_URL when the `postgres` project runs) and real mediasoup workers.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { createRelayEvents, type RelayEvents } from '../../src/relay/events/index.js';
import { MediaService } from '../../src/relay/index.js';
import { inProcessRtcPorts } from './ports.js';

export const TEST_INTERNAL_TOKEN = 'test-internal-token-0123456789abcdef';
/** Every test app is built with an explicit AUTH_KEY_SECRET (nothing generated, no file written). */
export const TEST_AUTH_KEY_SECRET = 'test-auth-key-secret-0123456789abcdef';

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
    const database = await openDatabase(dbConfig);
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
  app: ReturnType<typeof createApp>;
  config: Config;
  database: Database;
  media: MediaService;
  /** The bus the media publishes on, with its stream and webhook sinks: the app's. */
  events: RelayEvents;
  logger: Logger;
  internalToken: string;
  close(): Promise<void>;
}

/**
 * @example const t = await buildTestApp({ MEDIASOUP_WORKERS: '2' }); afterAll(() => t.close())
 */
export async function buildTestApp(env: Record<string, string> = {}, options: { logger?: Logger; now?: () => Date } = {}): Promise<TestApp> {
  const workers = Number(env.MEDIASOUP_WORKERS ?? 1);
  const ports = inProcessRtcPorts(workers);
  const config = loadConfig({
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
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const { database, drop } = await openTestDatabase();
  const events = createRelayEvents(config.events, logger);
  const media = await MediaService.create(config.media, logger, { bus: events.bus });
  const internalToken = config.internalToken ?? TEST_INTERNAL_TOKEN;
  const app = createApp({ config, database, media, events, logger, internalToken, ...(options.now ? { now: options.now } : {}) });
  return {
    app,
    config,
    database,
    media,
    events,
    logger,
    internalToken,
    async close() {
      events.endStreams();
      await media.close();
      await events.flush();
      await database.close();
      await drop();
    },
  };
}
