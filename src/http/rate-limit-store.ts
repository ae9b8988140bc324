// Where rate-limit counters live: in this process's memory, or (REDIS_URL) in Redis shared by every instance.
import { type ClientRateLimitInfo, type HonoConfigType, MemoryStore, RedisStore, type RedisClient, type Store } from 'hono-rate-limiter';
import { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

/** `memory`: per instance by configuration; `redis`: shared; `memory-fallback`: Redis configured but failing. */
export type RateLimitMode = 'memory' | 'redis' | 'memory-fallback';

export interface RateLimitStores {
  /** A store for one budget; `name` keeps its keys apart from the other budgets'. */
  store(name: string): Store;
  mode(): RateLimitMode;
  /** Resolves once the shared store is connected, or after `ms` (it then starts in the fallback). */
  ready(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Every budget counts in this process's memory, in a store of its own. */
export function memoryStores(): RateLimitStores {
  return {
    store: () => new MemoryStore(),
    mode: () => 'memory',
    ready: async () => {},
    close: async () => {},
  };
}

export interface RedisStoresOptions {
  url: string;
  logger: Logger;
  /** Told of each switch to the per-instance fallback (for the metric). */
  onFallback?: () => void;
  /** Prefix of every key; distinct deployments sharing one Redis need distinct prefixes. */
  prefix?: string;
  /** Longest a request waits for Redis before counting in memory instead. */
  timeoutMs?: number;
  /** How often Redis is tried again while the fallback is in force. */
  probeMs?: number;
}

const DEFAULT_TIMEOUT_MS = 150;
const DEFAULT_PROBE_MS = 1000;

/**
 * Budgets counted in Redis by hono-rate-limiter's RedisStore (an atomic Lua script per hit; keys
 * `<prefix><budget>:<client or account digest>` with the window as expiry, nothing else stored),
 * shared by every instance. ioredis runs with short timeouts and without an offline queue, so an
 * absent Redis fails a command at once instead of holding it. When Redis fails or does not answer
 * within `timeoutMs`, every budget falls back to per-instance memory counters at the same limits
 * (degraded, never unlimited, never an error), logged once per switch; a probe every `probeMs`
 * switches back when Redis answers again.
 * @example const stores = redisStores({ url: 'redis://127.0.0.1:6379', logger })
 */
export function redisStores(options: RedisStoresOptions): RateLimitStores {
  const { logger, prefix = 'rl:', timeoutMs = DEFAULT_TIMEOUT_MS, probeMs = DEFAULT_PROBE_MS } = options;
  const redis = new Redis(options.url, {
    connectTimeout: Math.max(200, timeoutMs),
    commandTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnect for ever, at most a second apart; requests meanwhile count in memory.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    lazyConnect: false,
    // No auto-pipelining: it defers every command to the next turn of the event loop and wraps it in
    // a Pipeline, and under the auth-profile load (8 concurrent) nearly every batch held one command;
    // without it the server spent 10 % less CPU per rate-limited request (bench/profile-auth.ts with
    // BENCH_REDIS_URL, six alternated pairs: 142 against 158 µs).
    enableAutoPipelining: false,
  });
  // Connection errors surface through commands and the probe; an 'error' without a listener would crash the process.
  redis.on('error', (error: Error) => logger.debug({ err: { message: error.message } }, 'rate-limit store: redis connection error'));

  const client: RedisClient = {
    scriptLoad: (script) => redis.script('LOAD', script) as Promise<string>,
    evalsha: <TArgs extends unknown[], TData = unknown>(sha1: string, keys: string[], args: TArgs) =>
      redis.evalsha(sha1, keys.length, ...keys, ...args.map(String)) as Promise<TData>,
    decr: (key) => redis.decr(key),
    del: (key) => redis.del(key),
  };

  let mode: 'redis' | 'memory-fallback' = 'redis';
  let probe: NodeJS.Timeout | undefined;
  let closed = false;

  const fellBack = (error: unknown) => {
    if (mode === 'memory-fallback' || closed) return;
    mode = 'memory-fallback';
    logger.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'rate limits: Redis unavailable, counting per instance in memory');
    options.onFallback?.();
    probe = setInterval(() => {
      void deadline(redis.ping(), timeoutMs).then(
        () => {
          if (mode !== 'memory-fallback' || closed) return;
          mode = 'redis';
          clearInterval(probe);
          logger.warn('rate limits: Redis answers again, counting in Redis');
        },
        () => {},
      );
    }, probeMs);
    probe.unref();
  };

  return {
    store(name) {
      return new FailoverStore(new RedisStore({ client, prefix: `${prefix}${name}:` }), new MemoryStore(), {
        timeoutMs,
        inRedis: () => mode === 'redis',
        fellBack,
      });
    },
    mode: () => mode,
    async ready(ms) {
      if (redis.status === 'ready') return;
      await deadline(new Promise<void>((resolve) => redis.once('ready', () => resolve())), ms).catch(fellBack);
    },
    async close() {
      closed = true;
      clearInterval(probe);
      redis.disconnect();
    },
  };
}

/** Rejects when `promise` has not settled within `ms`. One promise per call (it runs on every request). */
function deadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The Redis store while it answers, else the memory store; each call bounded by `timeoutMs`. */
class FailoverStore implements Store {
  readonly localKeys = false;

  constructor(
    private readonly shared: RedisStore,
    private readonly local: MemoryStore,
    private readonly state: { timeoutMs: number; inRedis: () => boolean; fellBack: (error: unknown) => void },
  ) {}

  init(options: HonoConfigType): void {
    this.shared.init(options);
    this.local.init(options);
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const shared = await this.tryShared(() => this.shared.increment(key));
    if (shared) return shared;
    // A copy: the memory store answers with its live record.
    const { totalHits, resetTime } = this.local.increment(key);
    return { totalHits, ...(resetTime && { resetTime }) };
  }

  async decrement(key: string): Promise<void> {
    if ((await this.tryShared(async () => (await this.shared.decrement(key), true))) === undefined) this.local.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    if ((await this.tryShared(async () => (await this.shared.resetKey(key), true))) === undefined) this.local.resetKey(key);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    if (this.state.inRedis()) {
      try {
        return await deadline(this.shared.get(key), this.state.timeoutMs);
      } catch (error) {
        this.state.fellBack(error);
      }
    }
    return this.local.get(key);
  }

  /** The shared store's answer, or undefined (and the fallback in force) when it failed or was late. */
  private async tryShared<T>(call: () => Promise<T>): Promise<T | undefined> {
    if (!this.state.inRedis()) return undefined;
    try {
      return await deadline(call(), this.state.timeoutMs);
    } catch (error) {
      this.state.fellBack(error);
      return undefined;
    }
  }
}
