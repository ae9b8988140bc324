// `npm run db:migrate`: applies migrations to DATABASE_URL (or the embedded database) and exits.
import { ConfigError, loadConfig } from '../config/index.js';
import { prepareDataDir, PRIVATE_UMASK } from '../data-dir.js';
import { createLogger } from '../logger.js';
import { openDatabase } from './client.js';
import { migrateDatabase } from './migrate.js';

try {
  const config = loadConfig();
  process.umask(PRIVATE_UMASK);
  // The embedded database is opened where the service opens it, an earlier layout's moved first.
  if (config.database.kind === 'pglite' && config.database.dataDir !== undefined) await prepareDataDir(config.dataDir, createLogger({ level: 'warn' }));
  const database = await openDatabase(config.database);
  await migrateDatabase(database);
  await database.close();
  console.log(`migrations applied (${database.kind})`);
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exitCode = 1;
}
