// `npm run db:migrate`, and the release command of a deploy (`node dist/db/migrate-cli.js`): applies
// migrations to DATABASE_URL (or the embedded database) and exits. It reads the database's variables
// only: a release machine need not hold the service's secrets or media addresses.
import { ConfigError, loadDatabaseConfig } from '../config/index.js';
import { prepareDataDir, PRIVATE_UMASK } from '../data-dir.js';
import { createLogger } from '../logger.js';
import { openDatabase } from './client.js';
import { connectFailure, DatabaseUnreachableError, waitForDatabase } from './connect.js';
import { migrateDatabase } from './migrate.js';

try {
  const config = loadDatabaseConfig();
  process.umask(PRIVATE_UMASK);
  const logger = createLogger({ level: 'warn' });
  // The embedded database is opened where the service opens it, an earlier layout's moved first.
  if (config.database.kind === 'pglite' && config.database.dataDir !== undefined) await prepareDataDir(config.dataDir, logger);
  const database = await openDatabase(config.database);
  try {
    if (config.database.kind === 'postgres') {
      await waitForDatabase(database, { url: config.database.url, timeoutMs: config.databaseConnectTimeoutS * 1000, logger });
    }
    await migrateDatabase(database);
  } catch (error) {
    // One line, never the URL's password.
    throw new Error(error instanceof DatabaseUnreachableError ? error.message : `DATABASE_URL: the migrations could not be applied: ${connectFailure(error)}`, { cause: error });
  } finally {
    await database.close();
  }
  console.log(`migrations applied (${database.kind})`);
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
