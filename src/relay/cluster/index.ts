// This relay as a node of the cluster (CLUSTER_NODE_URL and REDIS_URL): its membership, its load as the
// other nodes read it, its telemetry on the other nodes' streams and theirs on its, and the cluster's metrics. Without the configuration there is no node: the
// relay is a single one, exactly as before.
import { Counter, Gauge, type Registry } from 'prom-client';
import { registerTotals } from '../../observability/totals.js';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import type { RelayBus } from '../events/index.js';
import type { MediaService } from '../media-service.js';
import { createTelemetry, type TelemetryStats } from './telemetry.js';
import { createMembership, MAX_HELD_IDS, type ClusterView, type LostNode, type MembershipOptions, type NodeRecord } from './membership.js';

/** Ids of lost nodes' resources remembered at most, and for how long: calls about them answer NODE_LOST meanwhile. */
const MAX_LOST_IDS = 200_000;
const LOST_IDS_MS = 10 * 60_000;

export interface ClusterNode {
  view(): ClusterView;
  /** Nodes registered since the view was read, read from Redis now and added to it (at most a few reads a second). */
  discover(): Promise<NodeRecord[]>;
  /** The lost node that held `id` (node.lost named it in the last 10 minutes), or undefined. */
  lostNodeOf(id: string): string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  collect(registry: Registry): void;
}

export interface ClusterNodeDeps {
  config: NonNullable<Config['cluster']>;
  /** Where pipe transports announce themselves (the media config's pipe), if cascading is on. */
  pipe?: { listenIp: string; announcedIp?: string | undefined } | undefined;
  media: MediaService;
  /** Where node.lost is published, by the node that takes a loss's lease. */
  bus: RelayBus;
  logger: Logger;
  /** Told of each other node lost, on every surviving node (its producers' copies here close). */
  onLost?: (nodeId: string) => void;
  /** Membership timings (tests shorten the heartbeat and the expiry). */
  membership?: Pick<MembershipOptions, 'heartbeatMs' | 'ttlMs' | 'prefix'>;
}

/** @example const node = createClusterNode({ config: config.cluster, media, logger }); await node.start() */
export function createClusterNode(deps: ClusterNodeDeps): ClusterNode {
  const { media, bus } = deps;
  let degradedSwitches: Counter | undefined;
  /** id → [lost node, until when], oldest first. */
  const lostIds = new Map<string, [string, number]>();

  function noteLost({ record, held, announce }: LostNode): void {
    const until = Date.now() + LOST_IDS_MS;
    for (const id of [...held.routerIds, ...held.transportIds, ...held.producerIds]) {
      lostIds.delete(id);
      lostIds.set(id, [record.id, until]);
    }
    while (lostIds.size > MAX_LOST_IDS) lostIds.delete(lostIds.keys().next().value!);
    deps.logger.warn({ nodeId: record.id, routers: held.routerIds.length, transports: held.transportIds.length, announce }, 'cluster: a node was lost (its record expired without a clean stop)');
    deps.onLost?.(record.id);
    if (announce) bus.publish({ type: 'node.lost', nodeId: record.id, routerIds: held.routerIds, transportIds: held.transportIds, producerIds: held.producerIds, truncated: held.truncated });
  }

  const membership = createMembership({
    self: { id: deps.config.nodeId, url: deps.config.nodeUrl, region: deps.config.region, pipeAddress: deps.pipe ? (deps.pipe.announcedIp ?? deps.pipe.listenIp) : undefined },
    redisUrl: deps.config.redisUrl,
    logger: deps.logger,
    onDegraded: (degraded) => {
      if (degraded) degradedSwitches?.inc();
    },
    held: () => media.heldIds(MAX_HELD_IDS),
    onLost: noteLost,
    async load() {
      const info = media.info();
      const cpu = (await media.workerStats()).reduce((sum, stats) => sum + stats.cpuUserMs + stats.cpuSystemMs, 0);
      return {
        routers: info.counts.routers,
        transports: info.counts.transports,
        consumers: info.counts.consumers,
        workerCpuMs: cpu,
        draining: info.draining,
        ...(deps.config.maxConsumers === undefined ? {} : { maxConsumers: deps.config.maxConsumers }),
      };
    },
    ...deps.membership,
  });
  const telemetry = createTelemetry({ redisUrl: deps.config.redisUrl, prefix: membership.prefix, nodeId: deps.config.nodeId, bus, logger: deps.logger });
  return {
    view: () => membership.view(),
    discover: () => membership.discover(),
    lostNodeOf(id) {
      const entry = lostIds.get(id);
      if (!entry) return undefined;
      if (entry[1] > Date.now()) return entry[0];
      lostIds.delete(id);
      return undefined;
    },
    async start() {
      telemetry.start();
      await membership.start();
    },
    async stop() {
      telemetry.stop();
      await membership.stop();
    },
    collect(registry) {
      const registers = [registry];
      new Gauge({
        name: 'relay_cluster_nodes',
        help: 'Live relay nodes this node knows, itself included (the last known while degraded)',
        registers,
        collect() {
          this.set(membership.view().nodes.length);
        },
      });
      new Gauge({
        name: 'relay_cluster_degraded',
        help: '1 while Redis does not answer this node (it serves with the nodes last known), else 0',
        registers,
        collect() {
          this.set(membership.view().degraded ? 1 : 0);
        },
      });
      degradedSwitches = new Counter({ name: 'relay_cluster_degraded_total', help: 'Times this node lost Redis (switched to degraded)', registers });
      registerTotals<TelemetryStats>(registry, () => telemetry.stats(), [
        ['relay_cluster_telemetry_sent_total', "This node's live-only events (scores, layers, speakers) published for the other nodes' streams", (stats) => stats.sent],
        ['relay_cluster_telemetry_received_total', "Other nodes' live-only events carried into this node's streams", (stats) => stats.received],
        ['relay_cluster_telemetry_dropped_total', "This node's live-only events not published for the others (Redis did not answer, or a batch was full)", (stats) => stats.dropped],
        ['relay_cluster_telemetry_rejected_total', "Entries read from the telemetry channel that are not another node's live-only event (ignored)", (stats) => stats.rejected],
      ]);
    },
  };
}
