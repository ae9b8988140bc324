// The relay as a whole: GET /internal/info and POST /internal/v1/drain (contract/service.ts).
import packageJson from '../../../package.json' with { type: 'json' };
import type { RateLimitMode } from '../../http/rate-limit-store.js';
import { formatTime } from '../../time.js';
import { drain, getInfo, type RelayInfo } from '../contract/service.js';
import type { RelayEvents, RelayEventsInfo } from '../events/index.js';
import type { ClusterView } from '../cluster/membership.js';
import type { MediaInfo, MediaService } from '../media-service.js';
import { relayRouter } from './router.js';

export interface ServiceRoutesDeps {
  media: MediaService;
  events: RelayEvents;
  /** Where the rate limits count now, for /internal/info. */
  rateLimitMode: () => RateLimitMode;
  /** The cluster as this node knows it; undefined: a single node. */
  cluster?: () => ClusterView | undefined;
}

export function serviceRoutes({ media, events, rateLimitMode, cluster }: ServiceRoutesDeps) {
  return relayRouter()
    .openapi(getInfo, async (c) => {
      const workerCpuMs = new Map((await media.workerStats()).map((stats) => [stats.slot, stats.cpuUserMs + stats.cpuSystemMs]));
      return c.json(infoView(media.info(), { rateLimitStore: rateLimitMode(), events: events.info(), workerCpuMs, cluster: cluster?.() }), 200);
    })
    // Stops new rooms only; the process exits on SIGTERM (docs/media-relay.md "Drain").
    .openapi(drain, (c) => {
      const { started, routers } = media.drain();
      return started ? c.json({ draining: true as const, routers }, 202) : c.json({ draining: true as const, routers }, 200);
    });
}

/** What /internal/info says beside the relay's own figures. */
export interface ServiceInfo {
  rateLimitStore: RateLimitMode;
  /** CPU ms of each slot's live worker (MediaService.workerStats), by slot index. */
  workerCpuMs?: ReadonlyMap<number, number>;
  events: RelayEventsInfo;
  cluster?: ClusterView | undefined;
}

export function infoView(info: MediaInfo, service: ServiceInfo, now = Date.now()): RelayInfo {
  return {
    version: packageJson.version,
    started_at: formatTime(info.startedAt),
    uptime_s: Math.floor((now - info.startedAt.getTime()) / 1000),
    draining: info.draining,
    workers: info.workers.map((worker, slot) => ({ ...worker, cpuMs: worker.alive ? (service.workerCpuMs?.get(slot) ?? null) : null })),
    counts: info.counts,
    limits: info.limits,
    largestRouter: info.largestRouter,
    rate_limits: { store: service.rateLimitStore },
    events: { ...service.events, webhook: { ...service.events.webhook } },
    cluster: service.cluster
      ? { enabled: true, nodeId: service.cluster.nodeId, degraded: service.cluster.degraded, nodes: service.cluster.nodes.length }
      : { enabled: false, nodeId: null, degraded: false, nodes: 0 },
  };
}
