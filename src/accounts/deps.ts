// What the accounts module is built from (src/compose.ts gives it): a leaf of the area.
import type { Config } from '../config/index.js';
import type { Database } from '../db/client.js';
import type { RateLimitStores } from '../http/rate-limit-store.js';
import type { Logger } from '../logger.js';
import type { AuthKeys } from '../secrets/auth-key.js';
import type { HashCost } from './passwords.js';

export interface AccountsDeps {
  config: Config;
  database: Database;
  logger: Logger;
  /** Subkeys of the AUTH_KEY_SECRET in force (config's, or the one generated at start-up). */
  authKeys: AuthKeys;
  /** Where rate-limit counters live; when absent, each budget counts in this module's memory. */
  rateLimitStores?: RateLimitStores;
  /** Injected so tests can move time; defaults to the wall clock. */
  now?: () => Date;
  /** argon2id's cost of new password hashes; the production parameters when absent (tests give a lower one). */
  hashCost?: HashCost;
}
