// Where a new room goes: the less loaded of two live, non-draining nodes drawn at random, with the rooms
// this node placed lately counted until the heartbeats do (src/relay/cluster/placement.ts).
import { describe, expect, it } from 'vitest';
import type { ClusterView, NodeRecord } from '../../src/relay/cluster/membership.js';
import { createPlacement, RESERVE_MS } from '../../src/relay/cluster/placement.js';

function node(id: string, routers: number, draining = false): NodeRecord {
  return { id, url: `http://${id}:3001`, region: null, pipeAddress: null, load: { routers, transports: 0, consumers: 0, workerCpuMs: 0, draining }, heartbeatAt: new Date().toISOString(), instance: id };
}

const view = (nodes: NodeRecord[], degraded = false): ClusterView => ({ nodeId: nodes[0]!.id, degraded, nodes });

describe('room placement over the nodes', () => {
  it('leaves the room on this node while Redis is away (degraded), and when no node takes rooms', () => {
    const placement = createPlacement({ selfRouters: () => 50, selfDraining: () => false });
    expect(placement.choose(view([node('a', 50), node('b', 0)], true))).toBeUndefined();
    const allDraining = createPlacement({ selfRouters: () => 0, selfDraining: () => true });
    expect(allDraining.choose(view([node('a', 0, true), node('b', 0, true)]))).toBeUndefined();
  });

  it('never picks a draining node, this one included as soon as it drains, nor one that just refused', () => {
    let draining = false;
    const placement = createPlacement({ selfRouters: () => 0, selfDraining: () => draining });
    const nodes = [node('a', 0), node('b', 5), node('c', 0, true)];
    for (let i = 0; i < 200; i++) expect(placement.choose(view(nodes))?.id).not.toBe('c');
    draining = true; // before its record says so
    for (let i = 0; i < 200; i++) expect(placement.choose(view(nodes))?.id).toBe('b');
    expect(placement.choose(view(nodes), new Set(['b']))).toBeUndefined();
  });

  it('spreads a burst over nodes whose heartbeats have not counted it yet (all within RESERVE_MS)', () => {
    const placed: Record<string, number> = { a: 30, b: 0, c: 0 };
    const placement = createPlacement({ selfRouters: () => placed.a!, selfDraining: () => false, now: () => 0 });
    // The view stays as the heartbeats last said (A 30, the others empty) for the whole burst.
    const stale = view([node('a', 30), node('b', 0), node('c', 0)]);
    for (let i = 0; i < 300; i++) placed[placement.choose(stale)?.id ?? 'a']!++;
    const counts = Object.values(placed);
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(330);
    expect(Math.max(...counts) / Math.min(...counts)).toBeLessThanOrEqual(1.3);
  });

  it('counts a reservation for RESERVE_MS only: then the heartbeats carry the load', () => {
    let now = 0;
    // Always draws C first, then B.
    const placement = createPlacement({ selfRouters: () => 50, selfDraining: () => false, now: () => now, random: () => 0.9 });
    const nodes = view([node('a', 50), node('b', 0), node('c', 0)]);
    expect([0, 1, 2].map(() => placement.choose(nodes)?.id)).toEqual(['c', 'b', 'c']);
    now += RESERVE_MS - 1;
    expect(placement.choose(nodes)?.id).toBe('b'); // C 2 reserved, B 1
    now += 2;
    expect(placement.choose(nodes)?.id).toBe('c'); // the first three expired; B's last one still counts
  });

  it("counts a node's routers as it last answered a forwarded call, until its next heartbeat, and drops the reservations that count includes", () => {
    let now = 1_000;
    const placement = createPlacement({ selfRouters: () => 50, selfDraining: () => false, now: () => now, random: () => 0.9 });
    const beat = new Date(500).toISOString();
    const nodes = view([{ ...node('a', 50) }, { ...node('b', 0), heartbeatAt: beat }, { ...node('c', 0), heartbeatAt: beat }]);
    expect(placement.choose(nodes)?.id).toBe('c'); // C reserved 1
    // C answered the forwarded creation: 40 routers (others placed there too); its reservation is in that count.
    placement.observe('c', 40, now);
    now += 1;
    expect(placement.choose(nodes)?.id).toBe('b'); // C 40 against B 0
    // A heartbeat of C newer than what it answered: the heartbeat counts again.
    const fresh = view([{ ...node('a', 50) }, { ...node('b', 5), heartbeatAt: beat }, { ...node('c', 0), heartbeatAt: new Date(now + 1).toISOString() }]);
    expect(placement.choose(fresh)?.id).toBe('c');
  });
});
