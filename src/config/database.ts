// Which database: PostgreSQL, or the embedded PGlite on disk or in memory.
import { z } from 'zod';
import { optionalString } from './env.js';
import { serverVariables } from './server.js';

type DatabaseChoice = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string | undefined };

export const databaseVariables = {
  DATABASE_URL: optionalString,
};

// NODE_ENV and DATA_DIR belong to the server slice; read here too to choose the folder and refuse PGlite in production.
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
      url === undefined ? { kind: 'pglite', dataDir: env.DATA_DIR } : url.startsWith('memory://') ? { kind: 'pglite', dataDir: undefined } : { kind: 'postgres', url };
    return { database };
  });
