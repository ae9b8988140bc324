// Counters of totals a source keeps itself (its stats()), read when scraped: nothing on the counted path.
import { Counter, type Registry } from 'prom-client';

/** One counter: its name, its help, and which of the source's totals it shows. */
export type TotalRow<S> = readonly [name: string, help: string, pick: (stats: S) => number];

/**
 * @example registerTotals(registry, () => webhook.stats(), [['media_events_webhook_delivered_total', 'Events delivered', (s) => s.delivered]])
 */
export function registerTotals<S>(registry: Registry, stats: () => S, rows: readonly TotalRow<S>[]): void {
  for (const [name, help, pick] of rows) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(pick(stats()));
      },
    });
  }
}
