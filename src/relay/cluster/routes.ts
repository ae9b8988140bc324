// GET /internal/v1/cluster (contract.ts).
import { formatTime } from '../../time.js';
import { relayRouter } from '../http/router.js';
import { getCluster, type ClusterAnswer } from './contract.js';
import type { ClusterView } from './membership.js';

export function clusterRoutes(view: () => ClusterView | undefined) {
  return relayRouter().openapi(getCluster, (c) => c.json(clusterAnswer(view()), 200));
}

export function clusterAnswer(view: ClusterView | undefined, now = Date.now()): ClusterAnswer {
  if (!view) return { enabled: false, nodeId: null, degraded: false, nodes: [] };
  return {
    enabled: true,
    nodeId: view.nodeId,
    degraded: view.degraded,
    nodes: view.nodes.map((node) => {
      const at = new Date(node.heartbeatAt);
      return {
        id: node.id,
        self: node.id === view.nodeId,
        url: node.url,
        region: node.region,
        pipeAddress: node.pipeAddress,
        load: node.load,
        heartbeatAt: formatTime(at),
        heartbeatAgeMs: Math.max(0, Math.round(now - at.getTime())),
      };
    }),
  };
}
