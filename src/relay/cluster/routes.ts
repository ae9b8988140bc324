// GET /internal/v1/cluster and GET /internal/v1/cluster/resources/{id} (contract.ts).
import { formatTime } from '../../time.js';
import { notFound } from '../errors.js';
import { relayRouter } from '../http/router.js';
import { getCluster, locateResource, type ClusterAnswer } from './contract.js';
import type { ClusterView } from './membership.js';

export interface ClusterRoutesDeps {
  view: () => ClusterView | undefined;
  /** What this node holds under `id` (a resource kind, `recording`), or undefined. */
  holds: (id: string) => string | undefined;
}

export function clusterRoutes({ view, holds }: ClusterRoutesDeps) {
  return relayRouter()
    .openapi(getCluster, (c) => c.json(clusterAnswer(view()), 200))
    .openapi(locateResource, (c) => {
      const { id } = c.req.valid('param');
      const kind = holds(id);
      if (!kind) throw notFound('resource', id);
      return c.json({ nodeId: view()?.nodeId ?? null, kind }, 200);
    });
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
