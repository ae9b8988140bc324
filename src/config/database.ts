// Which database: PostgreSQL, or the embedded PGlite on disk or in memory.
import path from 'node:path';
import { z } from 'zod';
import { int, optionalString } from './env.js';
import { DATA_DIR_FOLDERS, serverVariables } from './server.js';

type DatabaseChoice = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string | undefined };

/**
 * postgres:// or postgresql:// with a host (or a `?host=` socket folder), or memory://. A bare
 * `localhost:5432` parses as a URL of scheme `localhost:` and would ask for a database named "432".
 */
function isDatabaseUrl(value: string): boolean {
  if (value.startsWith('memory://')) return true;
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && (url.hostname !== '' || url.searchParams.has('host'));
}

export const databaseVariables = {
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .max(4096)
      .refine(isDatabaseUrl, 'must be a postgres:// or postgresql:// URL with a host (postgres://user:password@host:5432/database), or memory://')
      .optional(),
  ),
  // How long start-up keeps trying to reach DATABASE_URL's server (with backoff) before giving up.
  DATABASE_CONNECT_TIMEOUT_S: int(30, 0, 3600),
};

// NODE_ENV and DATA_DIR belong to the server slice; read here too to choose the folder (DATA_DIR/pglite) and refuse PGlite in production.
export const databaseConfig = z
  .object({ NODE_ENV: serverVariables.NODE_ENV, DATA_DIR: serverVariables.DATA_DIR, ...databaseVariables })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === 'production' && (!env.DATABASE_URL || env.DATABASE_URL.startsWith('memory://'))) {
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_URL'],
        message: 'must point to PostgreSQL when NODE_ENV=production (the embedded database is for development only)',
      });
    }
  })
  .transform((env) => {
    const url = env.DATABASE_URL;
    const database: DatabaseChoice =
      url === undefined ? { kind: 'pglite', dataDir: path.join(env.DATA_DIR, DATA_DIR_FOLDERS.pglite) } : url.startsWith('memory://') ? { kind: 'pglite', dataDir: undefined } : { kind: 'postgres', url };
    return { database, databaseConnectTimeoutS: env.DATABASE_CONNECT_TIMEOUT_S };
  });
