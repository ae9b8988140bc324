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
  /** How often Redis is tried again while the fallback is in force (longer after relapses, see `stableMs`). */
  probeMs?: number;
  /** Consecutive successful probes before counting in Redis again. */
  probeSuccesses?: number;
  /** A return to Redis that fails again within this time doubles the next probe interval. */
  stableMs?: number;
  /** The longest probe interval that doubling reaches. */
  maxProbeMs?: number;
}

const DEFAULT_TIMEOUT_MS = 150;
const DEFAULT_PROBE_MS = 1000;
const DEFAULT_PROBE_SUCCESSES = 3;
const DEFAULT_STABLE_MS = 10_000;
const DEFAULT_MAX_PROBE_MS = 30_000;
/** The probe's counter: a budget of its own, one key, expiring like any counter. */
const PROBE_BUDGET = 'probe';
const PROBE_KEY = 'health';
const PROBE_WINDOW_MS = 60_000;

/**
 * Budgets counted in Redis by hono-rate-limiter's RedisStore (an atomic Lua script per hit; keys
 * `<prefix><budget>:<client or account digest>` with the window as expiry, nothing else stored),
 * shared by every instance. ioredis runs with short timeouts and without an offline queue, so an
 * absent Redis fails a command at once instead of holding it. When Redis fails or does not answer
 * within `timeoutMs`, every budget falls back to per-instance memory counters at the same limits
 * (degraded, never unlimited, never an error), logged once per switch.
 *
 * Redis is judged by what the counters do, not by PING: a Redis that answers PING but refuses
 * writes (a read-only replica, out of memory with `noeviction`) would otherwise be taken back and
 * dropped again on the next request, once a probe interval. The probe increments a counter of its
 * own (`<prefix>probe:health`) with the same script, every `probeMs`; after `probeSuccesses`
 * successes in a row the budgets return to Redis (logged once). A return that fails again within
 * `stableMs` doubles the next probe interval, up to `maxProbeMs`; one that held resets it.
 * @example const stores = redisStores({ url: 'redis://127.0.0.1:6379', logger })
 */
export function redisStores(options: RedisStoresOptions): RateLimitStores {
  const {
    logger,
    prefix = 'rl:',
    timeoutMs = DEFAULT_TIMEOUT_MS,
    probeMs = DEFAULT_PROBE_MS,
    probeSuccesses = DEFAULT_PROBE_SUCCESSES,
    stableMs = DEFAULT_STABLE_MS,
    maxProbeMs = DEFAULT_MAX_PROBE_MS,
  } = options;
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
  const probeStore = new RedisStore({ client, prefix: `${prefix}${PROBE_BUDGET}:` });
  probeStore.init(probeConfig(probeStore));

  let mode: 'redis' | 'memory-fallback' = 'redis';
  let probe: NodeJS.Timeout | undefined;
  let closed = false;
  /** The current interval between probes that fail. */
  let probeInterval = probeMs;
  let successes = 0;
  /** performance.now() of the last return to Redis. */
  let returnedAt = -Infinity;

  const scheduleProbe = (ms: number) => {
    probe = setTimeout(runProbe, ms);
    probe.unref();
  };

  const runProbe = () => {
    void deadline(probeStore.increment(PROBE_KEY), timeoutMs).then(
      () => {
        if (mode !== 'memory-fallback' || closed) return;
        successes += 1;
        if (successes < probeSuccesses) {
          // Confirmed at the base pace once Redis takes a write again.
          scheduleProbe(probeMs);
          return;
        }
        mode = 'redis';
        returnedAt = performance.now();
        logger.warn({ probes: successes }, 'rate limits: Redis answers again, counting in Redis');
      },
      () => {
        if (mode !== 'memory-fallback' || closed) return;
        successes = 0;
        scheduleProbe(probeInterval);
      },
    );
  };

  const fellBack = (error: unknown) => {
    if (mode === 'memory-fallback' || closed) return;
    mode = 'memory-fallback';
    // Failing again soon after a return: Redis takes some writes and refuses others; probe it less often.
    const relapse = performance.now() - returnedAt < stableMs;
    probeInterval = relapse ? Math.min(probeInterval * 2, maxProbeMs) : probeMs;
    successes = 0;
    logger.warn(
      { err: { message: error instanceof Error ? error.message : String(error) }, nextProbeMs: probeInterval },
      'rate limits: Redis unavailable, counting per instance in memory',
    );
    options.onFallback?.();
    scheduleProbe(probeInterval);
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
    close() {
      closed = true;
      clearTimeout(probe);
      redis.disconnect();
      return Promise.resolve();
    },
  };
}

/** The configuration a limiter would give the probe's store: a window and a limit it never enforces (no request reaches it). */
function probeConfig(store: RedisStore): HonoConfigType {
  return {
    windowMs: PROBE_WINDOW_MS,
    limit: Number.MAX_SAFE_INTEGER,
    standardHeaders: false,
    requestPropertyName: 'rateLimit',
    requestStorePropertyName: 'rateLimitStore',
    skipFailedRequests: false,
    skipSuccessfulRequests: false,
    requestWasSuccessful: () => true,
    store,
    keyGenerator: () => PROBE_KEY,
    message: 'rate-limit store probe',
    statusCode: 429,
    handler: (c) => c.body(null, 429),
    skip: () => true,
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
