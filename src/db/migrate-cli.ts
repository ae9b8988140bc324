// `npm run db:migrate`: applies migrations to DATABASE_URL (or the embedded database) and exits.
import { ConfigError, loadConfig } from '../config/index.js';
import { openDatabase } from './client.js';
import { migrateDatabase } from './migrate.js';

try {
  const config = loadConfig();
  const database = await openDatabase(config.database);
  await migrateDatabase(database);
  await database.close();
  console.log(`migrations applied (${database.kind})`);
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exitCode = 1;
}
