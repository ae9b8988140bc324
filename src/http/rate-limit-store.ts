// Where rate-limit counters live: in this process's memory, or (REDIS_URL) in Redis shared by every instance.
import { MemoryStore, type Store } from 'hono-rate-limiter';

/** `memory`: per instance by configuration; `redis`: shared; `memory-fallback`: Redis configured but failing. */
export type RateLimitMode = 'memory' | 'redis' | 'memory-fallback';

export interface RateLimitStores {
  /** A store for one budget; `name` keeps its keys apart from the other budgets'. */
  store(name: string): Store;
  mode(): RateLimitMode;
  close(): Promise<void>;
}

/** Every budget counts in this process's memory, in a store of its own. */
export function memoryStores(): RateLimitStores {
  return {
    store: () => new MemoryStore(),
    mode: () => 'memory',
    close: async () => {},
  };
}
