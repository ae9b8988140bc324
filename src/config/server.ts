// The process: its listeners, HTTP timeouts, log level, secrets, data folder and shutdown.
import path from 'node:path';
import { z } from 'zod';
import { int, optionalString } from './env.js';

/** The shortest AUTH_KEY_SECRET accepted (src/secrets/auth-key.ts derives its subkeys from it). */
export const AUTH_KEY_SECRET_MIN_LENGTH = 32;

/**
 * DATA_DIR's two folders: the secrets a development start generates, and the embedded database.
 * Apart, so that the database folder can be copied or backed up without the key that opens what it
 * seals (src/data-dir.ts).
 */
export const DATA_DIR_FOLDERS = { secrets: 'secrets', pglite: 'pglite' } as const;

/** DRAIN_TIMEOUT_S when unset in production. */
export const PRODUCTION_DRAIN_TIMEOUT_S = 30;

export const serverVariables = {
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(3000, 0, 65535),
  HOST: z.string().min(1).default('0.0.0.0'),
  INTERNAL_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  INTERNAL_HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./.data'),
  HTTP_HEADERS_TIMEOUT_MS: int(10_000, 1000, 600_000),
  HTTP_REQUEST_TIMEOUT_MS: int(30_000, 1000, 3_600_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(5000, 1000, 600_000),
  HTTP_CONNECTIONS_CHECK_MS: int(1000, 100, 30_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  INTERNAL_TOKEN: optionalString,
  // The one server-side secret (src/secrets/auth-key.ts): keys reset-code digests; never in the database.
  AUTH_KEY_SECRET: optionalString,
  // SIGTERM waits this long for the open rooms to end before closing them; 0: shut down at once.
  // Unset: 30 s in production, none elsewhere (a `tsx watch` reload must not wait for the rooms).
  DRAIN_TIMEOUT_S: z.coerce.number().int().min(0).max(3600).optional(),
};

export const serverConfig = z
  .object(serverVariables)
  .superRefine((env, ctx) => {
    if (env.INTERNAL_PORT !== undefined && env.INTERNAL_PORT !== 0 && env.INTERNAL_PORT === env.PORT) {
      ctx.addIssue({ code: 'custom', path: ['INTERNAL_PORT'], message: 'must differ from PORT' });
    }
    if (env.HTTP_REQUEST_TIMEOUT_MS < env.HTTP_HEADERS_TIMEOUT_MS) {
      // Node refuses a headersTimeout above requestTimeout.
      ctx.addIssue({ code: 'custom', path: ['HTTP_REQUEST_TIMEOUT_MS'], message: 'must be >= HTTP_HEADERS_TIMEOUT_MS' });
    }
    if (env.AUTH_KEY_SECRET !== undefined && env.AUTH_KEY_SECRET.length < AUTH_KEY_SECRET_MIN_LENGTH) {
      ctx.addIssue({ code: 'custom', path: ['AUTH_KEY_SECRET'], message: `must be at least ${AUTH_KEY_SECRET_MIN_LENGTH} characters` });
    }
    if (env.NODE_ENV === 'production') {
      if (!env.AUTH_KEY_SECRET) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_KEY_SECRET'],
          message: `must be set to at least ${AUTH_KEY_SECRET_MIN_LENGTH} characters when NODE_ENV=production (it keys the reset-code digests; it is never stored in the database)`,
        });
      }
      if (!env.INTERNAL_TOKEN || env.INTERNAL_TOKEN.length < 32) {
        ctx.addIssue({ code: 'custom', path: ['INTERNAL_TOKEN'], message: 'must be set to at least 32 characters when NODE_ENV=production' });
      }
    }
  })
  .transform((env) => ({
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    /** When set, /internal/* is served only on this second listener (e.g. Fly's private 6PN address). */
    internalListener: env.INTERNAL_PORT === undefined ? undefined : { host: env.INTERNAL_HOST, port: env.INTERNAL_PORT },
    /** Node's HTTP server timeouts, milliseconds. */
    http: {
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingIntervalMs: env.HTTP_CONNECTIONS_CHECK_MS,
    },
    logLevel: env.LOG_LEVEL,
    /** Undefined when not configured; the server then generates one and prints it once. */
    internalToken: env.INTERNAL_TOKEN,
    /**
     * AUTH_KEY_SECRET, at least 32 characters; undefined only outside production, where the server
     * then generates one and keeps it under `dataDir` (src/secrets/auth-key.ts).
     */
    authKeySecret: env.AUTH_KEY_SECRET,
    /** DATA_DIR: holds the embedded database (`pglite/`) and the generated development secrets (`secrets/`). */
    dataDir: env.DATA_DIR,
    /** `DATA_DIR/secrets`: the generated INTERNAL_TOKEN and AUTH_KEY_SECRET (never in a backup). */
    secretsDir: path.join(env.DATA_DIR, DATA_DIR_FOLDERS.secrets),
    /** How long SIGTERM waits for the last router to close before closing them (`shutdown`); 0: no drain. */
    drainTimeoutS: env.DRAIN_TIMEOUT_S ?? (env.NODE_ENV === 'production' ? PRODUCTION_DRAIN_TIMEOUT_S : 0),
  }));
