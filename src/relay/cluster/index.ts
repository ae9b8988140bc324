// This relay as a node of the cluster (CLUSTER_NODE_URL and REDIS_URL): its membership, its load as the
// other nodes read it, and the cluster's metrics. Without the configuration there is no node: the
// relay is a single one, exactly as before.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import type { MediaService } from '../media-service.js';
import { createMembership, type ClusterView, type MembershipOptions } from './membership.js';

export interface ClusterNode {
  view(): ClusterView;
  start(): Promise<void>;
  stop(): Promise<void>;
  collect(registry: Registry): void;
}

export interface ClusterNodeDeps {
  config: NonNullable<Config['cluster']>;
  /** Where pipe transports announce themselves (the media config's pipe), if cascading is on. */
  pipe?: { listenIp: string; announcedIp?: string | undefined } | undefined;
  media: MediaService;
  logger: Logger;
  /** Membership timings (tests shorten the heartbeat and the expiry). */
  membership?: Pick<MembershipOptions, 'heartbeatMs' | 'ttlMs' | 'prefix'>;
}

/** @example const node = createClusterNode({ config: config.cluster, media, logger }); await node.start() */
export function createClusterNode(deps: ClusterNodeDeps): ClusterNode {
  const { media } = deps;
  let degradedSwitches: Counter | undefined;
  const membership = createMembership({
    self: { id: deps.config.nodeId, url: deps.config.nodeUrl, region: deps.config.region, pipeAddress: deps.pipe ? (deps.pipe.announcedIp ?? deps.pipe.listenIp) : undefined },
    redisUrl: deps.config.redisUrl,
    logger: deps.logger,
    onDegraded: (degraded) => {
      if (degraded) degradedSwitches?.inc();
    },
    async load() {
      const info = media.info();
      const cpu = (await media.workerStats()).reduce((sum, stats) => sum + stats.cpuUserMs + stats.cpuSystemMs, 0);
      return { routers: info.counts.routers, transports: info.counts.transports, consumers: info.counts.consumers, workerCpuMs: cpu, draining: info.draining };
    },
    ...deps.membership,
  });
  return {
    view: () => membership.view(),
    start: () => membership.start(),
    stop: () => membership.stop(),
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
    },
  };
}
