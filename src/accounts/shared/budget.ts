// A count per key and fixed window in a rate-limit store (memory, or Redis shared by every instance):
// the per-client budgets of the password reset endpoints.
import type { ClientRateLimitInfo, HonoConfigType, Store } from 'hono-rate-limiter';

/**
 * `limit` spendings per key and window (`windowMs`, fixed from the key's first spending); 0: unlimited.
 * @example const over = await budget.spend(key); if (over !== undefined) refuse(retryAfterS = over)
 */
export class Budget {
  constructor(private readonly options: { store: Store; limit: number; windowMs: number }) {
    if (!Number.isInteger(options.limit) || options.limit < 0) throw new RangeError(`budget limit must be a non-negative integer, got ${options.limit}`);
    options.store.init?.({ windowMs: options.windowMs } as HonoConfigType);
  }

  get enabled(): boolean {
    return this.options.limit > 0;
  }

  /**
   * Spends one unit of each key's budget (counted even when refused: the window is fixed, so this
   * never extends it). Resolves with the seconds until the latest window over its limit ends, or
   * undefined when every key was within its limit.
   */
  async spend(keys: string[]): Promise<number | undefined> {
    const { limit, store, windowMs } = this.options;
    if (limit === 0) return undefined;
    const counts = await Promise.all(keys.map((key) => snapshot(store.increment(key))));
    const over = counts.filter((count) => count.totalHits > limit);
    if (over.length === 0) return undefined;
    const now = Date.now();
    const resetMs = Math.max(...over.map((count) => (count.resetTime?.getTime() ?? now + windowMs) - now));
    return Math.max(1, Math.ceil(resetMs / 1000));
  }

  /** Gives back one unit of each key (an attempt that turned out not to count). Never throws. */
  async giveBack(keys: string[]): Promise<void> {
    if (this.options.limit === 0) return;
    await Promise.all(keys.map((key) => Promise.resolve(this.options.store.decrement(key)).catch(() => {})));
  }
}

/** The memory store answers with its live record, which concurrent spendings go on changing. */
function snapshot(result: ClientRateLimitInfo | Promise<ClientRateLimitInfo>): Promise<ClientRateLimitInfo> {
  const copy = (info: ClientRateLimitInfo): ClientRateLimitInfo => ({ totalHits: info.totalHits, ...(info.resetTime && { resetTime: info.resetTime }) });
  return Promise.resolve(result).then(copy);
}
