// The text of .env.example, derived from CONFIG_VARIABLES so that it cannot drift from the schema
// (test/env-example.test.ts compares the committed file with it; `npm run env:example` rewrites it).
import { AREA_ENV_DOCS, CONFIG_VARIABLES, type ConfigArea } from './index.js';

/** The titles of the areas whose slice does not give its own (AREA_ENV_DOCS). */
const AREA_TITLES: Partial<Record<ConfigArea, string>> = {
  server: 'The process: listeners, timeouts, logs, secrets, data folder, shutdown',
  database: 'The database',
  relay: 'The media relay: mediasoup workers, ports, addresses, caps, cascading',
  events: "The relay's events: replay buffer, streams, webhook",
  turn: "TURN: the relay's coturn and the short-lived credentials handed out for it",
  cluster: 'The relay cluster: relays sharing one Redis (REDIS_URL) as nodes',
};

/**
 * Defaults that depend on the machine or on other variables: spelled here instead of a value, so the
 * file is the same on every machine. Every other variable shows the default the schema applies.
 * The notes of the areas whose slice gives its own come from AREA_ENV_DOCS.
 */
const DEFAULT_NOTES: Record<string, string> = {
  MEDIASOUP_WORKERS: 'the number of CPUs',
  INTERNAL_TOKEN: 'outside production, generated once and kept in DATA_DIR/secrets/internal-token',
  AUTH_KEY_SECRET: 'outside production, generated once and kept in DATA_DIR/secrets/auth-key-secret',
  DRAIN_TIMEOUT_S: '30 when NODE_ENV=production, else 0',
  DATABASE_URL: 'the embedded PGlite database in DATA_DIR/pglite',
  FLY_APP_NAME: 'set by Fly.io on its machines; unset elsewhere',
  CLUSTER_NODE_ID: 'FLY_MACHINE_ID, else the host name',
  CLUSTER_REGION: 'FLY_REGION',
  FLY_MACHINE_ID: 'set by Fly.io on its machines; unset elsewhere',
  FLY_REGION: 'set by Fly.io on its machines; unset elsewhere',
};

/** Ready-to-use values for the local services of compose.yaml (`docker compose up -d`). */
const COMPOSE_VALUES: Record<string, string> = {
  DATABASE_URL: 'postgres://chat:chat@127.0.0.1:5432/chat',
  REDIS_URL: 'redis://127.0.0.1:6379',
  TURN_URLS: 'turn:127.0.0.1:3478?transport=udp,turn:127.0.0.1:3478?transport=tcp',
  TURN_SECRET: 'local-turn-secret-0123456789',
};

export function renderEnvExample(): string {
  const lines = [
    '# chat-backend configuration. Copy this file to .env (npm start and npm run dev read it when present;',
    '# variables already set in the environment win) and uncomment what you change.',
    '# Each line shows the default. The meaning of each variable: README.md, "Configuration".',
    '# Generated from src/config by `npm run env:example`; test/env-example.test.ts keeps it in step.',
  ];
  let area: ConfigArea | undefined;
  for (const variable of CONFIG_VARIABLES) {
    if (variable.area !== area) {
      area = variable.area;
      lines.push('', `# --- ${AREA_ENV_DOCS[area]?.title ?? AREA_TITLES[area] ?? area} ---`);
    }
    const section = AREA_ENV_DOCS[variable.area]?.sections?.[variable.name];
    if (section !== undefined) lines.push('', `# --- ${section} ---`);
    const note = AREA_ENV_DOCS[variable.area]?.notes?.[variable.name] ?? DEFAULT_NOTES[variable.name];
    if (note !== undefined) lines.push(`# ${variable.name}=    (default: ${note})`);
    else lines.push(`# ${variable.name}=${variable.default ?? ''}`);
    const composeValue = COMPOSE_VALUES[variable.name];
    if (composeValue !== undefined) lines.push(`# with compose.yaml (docker compose up -d): ${variable.name}=${composeValue}`);
  }
  return `${lines.join('\n')}\n`;
}
