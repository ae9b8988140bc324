// GET /internal/v1/cluster and GET /internal/v1/cluster/resources/{id} (contract.ts).
import { formatTime } from '../../time.js';
import { conflict, notFound } from '../errors.js';
import { relayRouter, withJsonBody } from '../http/router.js';
import { closePipe, closeRoomPart, ensureRoomPart, getCluster, joinRoomSpeakers, locateResource, openPipe, pipeState, type ClusterAnswer } from './contract.js';
import type { Span } from './span.js';
import type { ClusterView } from './membership.js';

export interface ClusterRoutesDeps {
  view: () => ClusterView | undefined;
  /** What this node holds under `id` (a resource kind, `recording`), or undefined. */
  holds: (id: string) => string | undefined;
  /** The rooms that span nodes (cluster nodes only). */
  span?: () => Span | undefined;
}

export function clusterRoutes({ view, holds, span }: ClusterRoutesDeps) {
  const spanning = (): Span => {
    const made = span?.();
    if (!made) throw conflict('this node takes no part of rooms of other nodes (not a cluster node)', {});
    return made;
  };
  return relayRouter()
    .openapi(withJsonBody(ensureRoomPart), async (c) => {
      await spanning().ensurePart(c.req.valid('param').id, c.req.valid('json'));
      return c.body(null, 204);
    })
    .openapi(closeRoomPart, (c) => {
      spanning().closePart(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(withJsonBody(joinRoomSpeakers), async (c) => {
      await spanning().joinOriginSpeakers(c.req.valid('param').id, c.req.valid('json').producerId);
      return c.body(null, 204);
    })
    .openapi(withJsonBody(openPipe), async (c) => c.json(await spanning().openPipe(c.req.valid('json')), 201))
    .openapi(closePipe, (c) => {
      spanning().closeSource(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(withJsonBody(pipeState), async (c) => {
      await spanning().copyState(c.req.valid('param').id, c.req.valid('json'));
      return c.body(null, 204);
    })
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
