// Start-up's wait for the database server: retried with backoff for DATABASE_CONNECT_TIMEOUT_S, one
// log line per attempt naming DATABASE_URL's host and port (never its credentials), then one fatal line.
import type { Logger } from '../logger.js';
import type { Database } from './client.js';

/** `host:port` of a PostgreSQL URL, without user or password (5432 when the URL names no port). */
export function databaseAddress(url: string): string {
  const parsed = new URL(url);
  const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
  return `${host}:${parsed.port || '5432'}`;
}

export class DatabaseUnreachableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DatabaseUnreachableError';
  }
}

/** What went wrong, short: `ECONNREFUSED 127.0.0.1:5432`, `ENOTFOUND db.example`, or the server's own words. */
export function connectFailure(error: unknown): string {
  const e = error as { code?: unknown; address?: unknown; port?: number; hostname?: unknown; message?: unknown }; // Node's system errors: a numeric port
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    const where = typeof e.address === 'string' ? `${e.address}${e.port === undefined ? '' : `:${String(e.port)}`}` : typeof e.hostname === 'string' ? e.hostname : '';
    return where ? `${e.code} ${where}` : e.code;
  }
  return typeof e?.message === 'string' ? e.message.split('\n')[0]!.slice(0, 300) : String(error).slice(0, 300);
}

/**
 * A server that answered and refused (wrong password, no such database, no permission: SQLSTATE
 * classes 28 and 3D, 42501) will refuse again: no point waiting for it.
 */
function isFinal(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && (/^(28|3D)/.test(code) || code === '42501');
}

export interface WaitForDatabaseOptions {
  /** DATABASE_URL, for the address the lines name. */
  url: string;
  timeoutMs: number;
  logger: Logger;
  /** First delay between attempts; doubles up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Resolves once the database answers; throws DatabaseUnreachableError (one line naming DATABASE_URL's
 * address and the last cause) when it has not within `timeoutMs`, or at once when it refused us.
 * @example await waitForDatabase(database, { url: config.database.url, timeoutMs: 30_000, logger })
 */
export async function waitForDatabase(database: Pick<Database, 'ping'>, options: WaitForDatabaseOptions): Promise<void> {
  const { timeoutMs, logger, baseDelayMs = 500, maxDelayMs = 5000 } = options;
  const address = databaseAddress(options.url);
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await database.ping(Math.max(1000, Math.min(5000, deadline - Date.now())));
      if (attempt > 1) logger.info({ database: address, attempts: attempt }, `database reachable at ${address}`);
      return;
    } catch (error) {
      const cause = connectFailure(error);
      if (isFinal(error)) {
        throw new DatabaseUnreachableError(`DATABASE_URL: the database at ${address} refused the connection: ${cause}`, { cause: error });
      }
      const delayMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      if (Date.now() + delayMs > deadline) {
        throw new DatabaseUnreachableError(
          `DATABASE_URL: no database reachable at ${address} after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${Math.round(timeoutMs / 1000)} s (DATABASE_CONNECT_TIMEOUT_S): ${cause}`,
          { cause: error },
        );
      }
      logger.warn({ database: address, attempt, cause, retryInMs: delayMs }, `database not reachable at ${address} (DATABASE_URL): ${cause}; retrying in ${delayMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
