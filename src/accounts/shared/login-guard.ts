// Per-account limit on password guessing: failed logins and failed password changes of one account
// (its id; a name that finds none, its folded form), whatever the client's address; wrong
// second-factor codes count in the same budget.
import { createHash } from 'node:crypto';
import type { ClientRateLimitInfo, HonoConfigType, Store } from 'hono-rate-limiter';
import { ACCOUNT_ERRORS, type AccountErrorRow } from '../vocabulary.js';
import { AuthError, type AuthFailure } from './auth-error.js';

/** The failures that are a guess (their rows say `guess`); any other outcome gives its attempt back. */
function isGuess(kind: AuthFailure): boolean {
  const row: AccountErrorRow = ACCOUNT_ERRORS[kind];
  return row.guess === true;
}

export interface LoginGuardOptions {
  /** Failures allowed per key and window; 0 disables the guard. */
  limit: number;
  windowMs: number;
  store: Store;
}

/**
 * The budget of a name that finds no account: `name` as the lookup compares it (for a login, the
 * name as the database folds it, see AuthService.findAccount), digested so the counter store never
 * holds an address. Unknown names are counted like known ones, so the limit answers alike for both.
 */
export function accountKey(name: string): string {
  return `n:${createHash('sha256').update(name).digest('base64url').slice(0, 22)}`;
}

/** The budget of an existing account, whichever of its names or spellings found it. */
export function userKey(userId: number): string {
  return `id:${userId}`;
}

/**
 * The count as of this increment. The memory store answers with its live record, which concurrent
 * attempts go on incrementing before this one reads it after an await.
 */
function snapshot(result: ClientRateLimitInfo | Promise<ClientRateLimitInfo>): ClientRateLimitInfo | Promise<ClientRateLimitInfo> {
  const copy = (info: ClientRateLimitInfo): ClientRateLimitInfo => ({ totalHits: info.totalHits, ...(info.resetTime && { resetTime: info.resetTime }) });
  return result instanceof Promise ? result.then(copy) : copy(result);
}

/**
 * What the guard's store is initialised with. hono-rate-limiter's stores take their window from
 * `Store.init(config)`, which the library's middleware calls with its whole configuration (neither
 * MemoryStore nor RedisStore takes a window in its constructor). The guard counts without that
 * middleware, so it states its own limit in the same type, nothing cast: its window, limit and store,
 * no headers; the members only the HTTP middleware reads have the library's defaults, and the two it
 * has none for refuse to run, since the guard's keys come from run() and its refusal is an AuthError.
 */
function storeConfig({ windowMs, limit, store }: LoginGuardOptions): HonoConfigType {
  return {
    windowMs,
    limit,
    store,
    standardHeaders: false,
    message: 'Too many requests, please try again later.',
    statusCode: 429,
    requestPropertyName: 'rateLimit',
    requestStorePropertyName: 'rateLimitStore',
    skipFailedRequests: false,
    skipSuccessfulRequests: false,
    requestWasSuccessful: (c) => c.res.status < 400,
    skip: () => false,
    keyGenerator: () => {
      throw new Error('LoginGuard: keys are given to run(), not read from a request');
    },
    handler: () => {
      throw new AuthError('too_many_failures');
    },
  };
}

/**
 * Counts each attempt before it runs (so concurrent guesses cannot all pass a check made before any
 * failed) and gives it back unless it failed as a guess. Windows are fixed, counted from an account's
 * first failure: however many attempts follow, the owner can log in again when the window ends.
 * @example const found = await auth.findAccount(account); await guard.run([found.key], () => auth.checkPassword(found, password))
 */
export class LoginGuard {
  constructor(private readonly options: LoginGuardOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 0) throw new RangeError(`failure limit must be a non-negative integer, got ${options.limit}`);
    options.store.init?.(storeConfig(options));
  }

  async run<T>(keys: string[], attempt: () => Promise<T>): Promise<T> {
    const { limit, store } = this.options;
    if (limit === 0) return attempt();
    const counts = await Promise.all(keys.map((key) => Promise.resolve(snapshot(store.increment(key)))));
    const over = counts.filter((count) => count.totalHits > limit);
    if (over.length > 0) {
      const resetMs = Math.max(...over.map((count) => (count.resetTime?.getTime() ?? Date.now() + this.options.windowMs) - Date.now()));
      throw new AuthError('too_many_failures', undefined, Math.max(1, Math.ceil(resetMs / 1000)));
    }
    let result: T;
    try {
      result = await attempt();
    } catch (error) {
      if (!(error instanceof AuthError && isGuess(error.reason))) await this.giveBack(keys);
      throw error;
    }
    await this.giveBack(keys);
    return result;
  }

  /** An attempt that was not a failed guess. */
  private async giveBack(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => Promise.resolve(this.options.store.decrement(key)).catch(() => {})));
  }
}
