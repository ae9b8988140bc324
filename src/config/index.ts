// The only reader of process.env: parsed once with zod, failing fast with the variable's name.
import { z } from 'zod';
import { accountsConfig, accountsEnvDocs } from './accounts.js';
import { clusterConfig } from './cluster.js';
import { databaseConfig } from './database.js';
import { configError } from './env.js';
import { eventsConfig } from './events.js';
import { relayConfig } from './relay.js';
import { serverConfig, serverVariables } from './server.js';
import { turnConfig } from './turn.js';

export { ConfigError } from './env.js';
export { isUnspecifiedIp, type PipePeerCidr } from './relay.js';
export { turnUrlProblem } from './turn.js';

/** One slice per area, each a schema of its variables whose transform gives its part of Config. */
const slices = { server: serverConfig, database: databaseConfig, accounts: accountsConfig, relay: relayConfig, events: eventsConfig, turn: turnConfig, cluster: clusterConfig };

/** Every slice reads the same environment; their outputs (disjoint keys) merge into one Config. */
const configSchema = serverConfig.and(databaseConfig).and(accountsConfig).and(relayConfig).and(eventsConfig).and(turnConfig).and(clusterConfig);

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

/** The database slice alone, with DATA_DIR (where the embedded database's folder is). */
const databaseOnlySchema = databaseConfig.and(z.object({ DATA_DIR: serverVariables.DATA_DIR }).transform((env) => ({ dataDir: env.DATA_DIR })));

export type DatabaseConfig = z.output<typeof databaseOnlySchema>;

/**
 * Only what opening and migrating the database needs (DATABASE_URL, DATABASE_CONNECT_TIMEOUT_S,
 * DATA_DIR, NODE_ENV): the release command runs where the service's other secrets and addresses
 * need not be set. Throws ConfigError naming every bad variable of that slice.
 * @example const { database } = loadDatabaseConfig()
 */
export function loadDatabaseConfig(source: Record<string, string | undefined> = process.env): DatabaseConfig {
  const parsed = databaseOnlySchema.safeParse(source);
  if (!parsed.success) throw configError(parsed.error);
  return parsed.data;
}

export type ConfigArea = keyof typeof slices;

/** How .env.example words an area: its title, the headings of its parts (by their first variable), and the defaults spelled as a note instead of a value. */
export interface EnvDocs {
  title: string;
  sections?: Readonly<Record<string, string>>;
  notes?: Readonly<Record<string, string>>;
}

/** What the slices that word their own part of .env.example say there: the area's title, the notes of its defaults. */
export const AREA_ENV_DOCS: Partial<Record<ConfigArea, EnvDocs>> = { accounts: accountsEnvDocs };

/** The variables of a slice: its object's shape, or the shapes of the parts a slice checks apart (an intersection). */
function shapesOf(slice: z.ZodType): z.ZodRawShape[] {
  if (slice instanceof z.ZodIntersection) return [...shapesOf(slice.def.left as z.ZodType), ...shapesOf(slice.def.right as z.ZodType)];
  if (slice instanceof z.ZodPipe) return shapesOf(slice.in as z.ZodType);
  if (slice instanceof z.ZodObject) return [slice.shape];
  throw new Error('a config slice is an object of variables (refined, transformed), or an intersection of such');
}

/**
 * Every environment variable the configuration reads, with its default (as the environment would
 * spell it; undefined: unset means off or generated) and the area it belongs to. A variable that
 * several slices read (NODE_ENV, DATA_DIR) belongs to the first, the server.
 */
export const CONFIG_VARIABLES: readonly { name: string; area: ConfigArea; default: string | undefined }[] = (() => {
  const seen = new Map<string, { name: string; area: ConfigArea; default: string | undefined }>();
  for (const [area, slice] of Object.entries(slices) as [ConfigArea, (typeof slices)[ConfigArea]][]) {
    for (const [name, schema] of shapesOf(slice).flatMap((shape) => Object.entries(shape))) {
      if (seen.has(name)) continue;
      const unset = (schema as z.ZodType).safeParse(undefined);
      const value = unset.success ? unset.data : undefined;
      const spelled = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
      seen.set(name, { name, area, default: value === undefined ? undefined : spelled });
    }
  }
  return [...seen.values()];
})();
