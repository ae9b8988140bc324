// Which worker a new room goes to: the live one with the fewest routers (room parts), those being created included.
import { RelayError } from '../errors.js';
import type { WorkerPool, WorkerSlot } from '../engine/pool.js';
import type { types as ms } from 'mediasoup';

export class RouterPlacement {
  /** Routers being created, per slot: counted against the limit and the placement before they exist. */
  private readonly pendingRouters = new Map<number, number>();

  constructor(
    private readonly pool: WorkerPool,
    /** Routers (room parts) a worker holds now. */
    private readonly routersOn: (worker: ms.Worker) => number,
  ) {}

  /** Routers being created on every worker. */
  pending(): number {
    return [...this.pendingRouters.values()].reduce((a, b) => a + b, 0);
  }

  /** The live worker with the fewest routers; MEDIASOUP_ERROR when none is alive. */
  place(): WorkerSlot {
    let best: { slot: WorkerSlot; load: number } | undefined;
    for (const slot of this.pool.live()) {
      const load = this.routersOn(slot.worker!) + (this.pendingRouters.get(slot.index) ?? 0);
      if (!best || load < best.load) best = { slot, load };
    }
    if (!best) throw new RelayError('MEDIASOUP_ERROR', 'no live media worker');
    return best.slot;
  }

  /** Counts a router as being created on `slot` until `create` settles. */
  async reserve<T>(slot: WorkerSlot, create: () => Promise<T>): Promise<T> {
    this.pendingRouters.set(slot.index, (this.pendingRouters.get(slot.index) ?? 0) + 1);
    try {
      return await create();
    } finally {
      this.pendingRouters.set(slot.index, (this.pendingRouters.get(slot.index) ?? 1) - 1);
    }
  }
}
