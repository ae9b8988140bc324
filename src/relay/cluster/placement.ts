// Where a new room goes (POST /v1/routers on any node): the less loaded of two live, non-draining nodes
// drawn at random (the power of two random choices), so that no node is picked by every caller at
// once, as "the least loaded" would be. A node's load is its routers as its last heartbeat said, plus
// the rooms this node placed on it since (a reservation held RESERVE_MS, until the heartbeats count
// them): a burst of creations spreads instead of herding on the node that looked emptiest.
// While Redis does not answer (degraded) new rooms stay on the node called.
import type { ClusterView, NodeRecord } from './membership.js';

/** How long a placement counts toward its node's load: past the next heartbeats that include it. */
export const RESERVE_MS = 2_500;

export interface PlacementOptions {
  /** This node's routers now (its own record in the view may be a heartbeat old). */
  selfRouters: () => number;
  /** Whether this node drains now (its record may not say so yet). */
  selfDraining: () => boolean;
  random?: () => number;
  now?: () => number;
}

export interface Placement {
  /**
   * A node's routers as it answered a forwarded call (fresher than its heartbeat): counted instead of
   * the heartbeat's until the next heartbeat, and the reservations made on it before `at` dropped
   * (the count includes them).
   */
  observe(nodeId: string, routers: number, at?: number): void;
  /**
   * The node for a new room, with the choice reserved; undefined: this node (or none takes rooms: this
   * node answers). `excluded`: nodes that just refused it (draining before their record said so).
   */
  choose(view: ClusterView, excluded?: ReadonlySet<string>): NodeRecord | undefined;
}

/** @example const placement = createPlacement({ selfRouters: () => media.routerCount(), selfDraining: () => media.draining }) */
export function createPlacement(options: PlacementOptions): Placement {
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  /** node id → when each reservation ends, oldest first. */
  const reserved = new Map<string, number[]>();
  /** node id → its routers as it last answered, and when. */
  const observed = new Map<string, { routers: number; at: number }>();

  /** Drops `nodeId`'s reservations that end by `by`; returns how many are left. */
  function dropReservations(nodeId: string, by: number): number {
    const ends = reserved.get(nodeId);
    if (!ends) return 0;
    while (ends.length > 0 && ends[0]! <= by) ends.shift();
    if (ends.length === 0) reserved.delete(nodeId);
    return ends.length;
  }

  return {
    observe(nodeId, routers, at = now()) {
      observed.set(nodeId, { routers, at });
      // Made by `at` (each ends RESERVE_MS after it was made): the count includes them.
      dropReservations(nodeId, at + RESERVE_MS);
    },
    choose(view, excluded) {
      if (view.degraded) return undefined;
      const at = now();
      const isSelf = (node: NodeRecord) => node.id === view.nodeId;
      const live = view.nodes.filter((node) => !excluded?.has(node.id) && !(isSelf(node) ? options.selfDraining() : node.load.draining));
      if (live.length === 0) return undefined;
      const first = Math.floor(random() * live.length);
      const second = live.length === 1 ? first : (first + 1 + Math.floor(random() * (live.length - 1))) % live.length;
      const routersOf = (node: NodeRecord) => {
        const seen = observed.get(node.id);
        return seen && seen.at > Date.parse(node.heartbeatAt) ? seen.routers : node.load.routers;
      };
      const load = (node: NodeRecord) => (isSelf(node) ? options.selfRouters() : routersOf(node)) + dropReservations(node.id, at);
      const [a, b] = [live[first]!, live[second]!];
      const chosen = load(b) < load(a) ? b : a;
      // This node's own rooms count at once (selfRouters): only another node's need the reservation.
      if (isSelf(chosen)) return undefined;
      const ends = reserved.get(chosen.id) ?? [];
      ends.push(at + RESERVE_MS);
      reserved.set(chosen.id, ends);
      return chosen;
    },
  };
}
