// Opens the database: postgres.js for a PostgreSQL URL, embedded PGlite otherwise.
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite, PgliteDatabase } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Config } from '../config/index.js';
import { makePrivate } from '../data-dir.js';
import * as schema from './schema.js';

/**
 * The drizzle database. Do not use `db.transaction()` here: with postgres.js 3.4.9 a transaction
 * whose connection the server ends (a restart, an outage) makes the driver write its own ROLLBACK to
 * a closed socket from a timer, an uncaught TypeError that kills the process (porsager/postgres#1208).
 * Writes that must be atomic are single statements (data-modifying CTEs); see src/accounts/service.ts.
 */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /**
   * Runs `task` while holding the session-level advisory lock `key` (PostgreSQL), taken on a
   * connection of its own without a statement timeout, so the wait is as long as the holder's work;
   * a holder that dies releases it with its connection. On PGlite, one process's own database,
   * `task` simply runs.
   */
  exclusively<T>(key: bigint, task: () => Promise<T>): Promise<T>;
  /**
   * PGlite only (one process's own database, so every writer is in this process): calls `onNotify`
   * after each commit of a transaction that ran `pg_notify(channel, …)`; resolves with the unlisten.
   * Absent on PostgreSQL, where the event log's readers poll (see src/events/log/tail.ts).
   */
  listen?: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Whether a commit's `pg_notify` reaches a listener of this process: PGlite's, where Database.listen
 * exists. Elsewhere (PostgreSQL) the event log's readers poll, so a statement need not notify.
 */
export function notifiesCommits(db: Db): boolean {
  return db instanceof PgliteDatabase;
}

/**
 * PGlite runs PostgreSQL inside WebAssembly with PostgreSQL's default `shared_buffers` of 128 MB,
 * all of it resident once the server has started (idle RSS about 310 MB for PGlite alone). This
 * service's tables fit in a few megabytes, so 16 MB of buffers cost nothing in speed and bring PGlite
 * to about 160 MB. (PGlite's other memory option, `initialMemory`, can only raise the 128 MB the
 * WebAssembly module starts with.) Measured in bench/RESULTS.md, "Embedded database memory".
 */
const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

export interface OpenOptions {
  /**
   * PGlite only: start from this data directory (a tarball of PGlite's documented `dumpDataDir()`)
   * instead of creating a new cluster. The tests open every in-memory database from one migrated
   * snapshot (test/support/pglite-snapshot.ts): creating a cluster costs seconds, loading one a fraction.
   */
  pgliteSnapshot?: Blob;
}

/**
 * @example const database = await openDatabase(config.database); await migrateDatabase(database);
 */
export async function openDatabase(options: Config['database'], open: OpenOptions = {}): Promise<Database> {
  if (options.kind === 'postgres') {
    const client = postgres(options.url, {
      max: 10,
      // Bounded waits: during an outage requests fail fast instead of hanging.
      connect_timeout: 5,
      idle_timeout: 30,
      // A lost connection is retried after `backoff` seconds; postgres.js grows it to 20 s by default,
      // which held queries that long after an outage and delayed recovery as much. Capped at 0.5 s.
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
      // The array-type lookup postgres.js runs on every new connection is never awaited by it: when
      // the connection drops during that lookup (an outage), its rejection crashed the process. The
      // only array column (roles text[]) is parsed by drizzle from the text form.
      fetch_types: false,
      connection: { statement_timeout: 10_000, application_name: 'chat-backend' },
      onnotice: () => {},
    });
    const db = drizzlePostgres(client, { schema }) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      ping: (timeoutMs = 2000) => withTimeout(client`select 1`.then(() => undefined), timeoutMs),
      // A client of its own rather than the pool's reserve(): postgres.js 3.4.9's reserve() never
      // resolves while the pool has no open connection when fetch_types is off.
      exclusively: async (key, task) => {
        const lock = postgres(options.url, { max: 1, connect_timeout: 5, fetch_types: false, onnotice: () => {}, connection: { application_name: 'chat-backend' } });
        try {
          await lock`select pg_advisory_lock(${key.toString()}::bigint)`;
          try {
            return await task();
          } finally {
            await lock`select pg_advisory_unlock(${key.toString()}::bigint)`.catch(() => {});
          }
        } finally {
          await lock.end({ timeout: 2 });
        }
      },
      close: () => client.end({ timeout: 2 }),
    };
  }
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const client = new PGlite({ dataDir: options.dataDir, startParams: PGLITE_START_PARAMS, loadDataDir: open.pgliteSnapshot });
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    ping: (timeoutMs = 2000) => withTimeout(db.execute(sql`select 1`).then(() => undefined), timeoutMs),
    exclusively: (_key, task) => task(),
    listen: (channel, onNotify) => client.listen(channel, () => onNotify()),
    // What PGlite made while it ran may carry read bits for others (see PRIVATE_UMASK): off at rest.
    close: async () => {
      await client.close();
      if (options.dataDir) await makePrivate(options.dataDir);
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
