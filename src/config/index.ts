// The only reader of process.env: parsed once with zod, failing fast with the variable's name.
import type { z } from 'zod';
import { accountsConfig } from './accounts.js';
import { databaseConfig } from './database.js';
import { configError } from './env.js';
import { eventsConfig } from './events.js';
import { relayConfig } from './relay.js';
import { serverConfig } from './server.js';

export { ConfigError } from './env.js';
export { isUnspecifiedIp, type PipePeerCidr } from './relay.js';

/** Every slice reads the same environment; their outputs (disjoint keys) merge into one Config. */
const configSchema = serverConfig.and(databaseConfig).and(accountsConfig).and(relayConfig).and(eventsConfig);

export type Config = z.output<typeof configSchema>;

/**
 * Parses the environment once. Throws ConfigError naming every bad variable.
 * @example const config = loadConfig({ ...process.env, PORT: '0' })
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(source);
  if (!parsed.success) throw configError(parsed.error);
  return parsed.data;
}
