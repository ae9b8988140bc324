// Per-router caps: how many transports, producers and consumers one router (one room) may hold.
// Creations under way count as held, as pending routers count against MEDIASOUP_MAX_ROUTERS, so a
// burst of concurrent requests cannot overshoot the cap while the engine works.
import { RelayError } from '../errors.js';
import type { Config } from '../../config/index.js';
import type { RoomCapSetting } from '../kinds/row.js';
import { kindsOf, type KindTable, type RoomKind } from './kinds.js';
import type { MediaRegistry } from './registry.js';

export type { RoomKind } from './kinds.js';

/** The kinds of /internal/info's `largestRouter`. */
export const ROOM_KINDS = ['transport', 'producer', 'consumer'] as const satisfies readonly RoomKind[];

/** The per-router caps of the kinds whose row (in `kinds`) names a setting, from the media settings. */
export function roomLimits(config: Config['media'], kinds: KindTable): RoomLimits {
  const limits: Partial<RoomLimits> = {};
  for (const kind of kindsOf(kinds)) {
    const row = kinds[kind] as { roomCap?: RoomCapSetting };
    if (row.roomCap !== undefined) limits[kind as RoomKind] = config[row.roomCap];
  }
  return limits as RoomLimits;
}

export type RoomLimits = Record<RoomKind, number>;

export class RoomCaps {
  /** `${kind}:${routerId}` → creations under way. */
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly registry: MediaRegistry,
    readonly limits: RoomLimits,
  ) {}

  /**
   * Runs `create` (engine call and registration) counted against the router's cap of `kind`, or
   * throws ROUTER_CAPACITY_EXCEEDED at once when the router holds (or is creating) its maximum.
   * The check and the reservation happen in one synchronous step.
   */
  async reserve<T>(routerId: string, kind: RoomKind, create: () => Promise<T>): Promise<T> {
    const key = `${kind}:${routerId}`;
    const pending = this.pending.get(key) ?? 0;
    const max = this.limits[kind];
    if (this.registry.countInRoom(routerId, kind) + pending >= max) {
      throw new RelayError('ROUTER_CAPACITY_EXCEEDED', `router ${routerId} already holds its maximum of ${max} ${this.registry.kinds[kind].plural}`, {
        routerId,
        resource: kind,
        max,
      });
    }
    this.pending.set(key, pending + 1);
    try {
      return await create();
    } finally {
      const left = (this.pending.get(key) ?? 1) - 1;
      if (left === 0) this.pending.delete(key);
      else this.pending.set(key, left);
    }
  }

  /** The most of each kind that any one router holds now (0 without routers), for /internal/info. */
  largest(): Record<KindTable[(typeof ROOM_KINDS)[number]]['plural'], number> {
    const largest = { transports: 0, producers: 0, consumers: 0 };
    for (const routerId of this.registry.ids('router')) {
      for (const kind of ROOM_KINDS) {
        const plural = this.registry.kinds[kind].plural;
        largest[plural] = Math.max(largest[plural], this.registry.countInRoom(routerId, kind));
      }
    }
    return largest;
  }
}
