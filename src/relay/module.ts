// The relay area as one module: the media service (workers, registry, ops), its events (bus, stream,
// webhook), the routes under /internal, its metrics, its readiness and its stop.
import type { Config } from '../config/index.js';
import type { Database } from '../db/client.js';
import { registerEventMetrics } from '../events/metrics.js';
import type { RateLimitMode } from '../http/rate-limit-store.js';
import type { DocumentPart, Module } from '../http/module.js';
import type { Logger } from '../logger.js';
import { createForwarder, registerForwardMetrics } from './cluster/forward.js';
import { createPlacement } from './cluster/placement.js';
import { createClusterNode, type ClusterNode } from './cluster/index.js';
import { createSpan, type Span } from './cluster/span.js';
import { RELAY_PREFIX } from './contract/route.js';
import { createRelayEvents, type RelayEvents } from './events/index.js';
import { eventStreamPath, eventWebhooks, type EventCatalog } from './events/openapi.js';
import { createInternalApp } from './http/app.js';
import { createMedia, type MediaService, type MediaServiceOptions } from './media-service.js';
import { registerRelayMetrics } from './metrics.js';
import { whipDocumentPaths, whipErrorScopes, whipPublicRoutes } from './kinds/whip/public.js';
import { createRecordings, type Recordings, type RecordingsDeps } from './recordings/recorder.js';

export interface RelayDeps {
  config: Pick<Config, 'media' | 'events' | 'recordings'> & Partial<Pick<Config, 'turn' | 'rateLimit' | 'cluster'>>;
  logger: Logger;
  /** Where the rate limits count now, for /internal/info. */
  rateLimitMode?: () => RateLimitMode;
  /** Engine options (tests shorten the worker backoff or the engine deadline). */
  media?: Omit<MediaServiceOptions, 'bus'>;
  /** Recorder options (tests shorten the stop timeout, or are told of each recording's ffmpeg). */
  recordings?: Pick<RecordingsDeps, 'ffmpegPath' | 'stopTimeoutMs' | 'upload' | 'onProcess'>;
  /** Other areas' events that the relay's bus carries too (the account area's), for the stream's and webhook's documentation. */
  otherEvents?: readonly EventCatalog[];
  /** Where durable events are kept (the event log, issue 39); without it, the bus keeps them in memory only. */
  database?: Database;
  /** The internal token (every node shares it): what a cluster node's own calls to the others carry. */
  internalToken?: string;
}

export interface RelayModule extends Module {
  media: MediaService;
  events: RelayEvents;
  /** The relay's recordings (one ffmpeg each); stopped, their files finalised, before the media closes. */
  recordings: Recordings;
  /** This relay as a node of the cluster; undefined without CLUSTER_NODE_URL (a single node). */
  cluster: ClusterNode | undefined;
  /**
   * The end of a drain that timed out: the recordings stop first, while their RTP still flows (ffmpeg
   * then finalises each file at once), then every open room closes (events say `shutdown`). Returns
   * how many rooms it closed.
   */
  closeRooms(): Promise<number>;
}

/**
 * Starts the media workers; fails (and leaves nothing running) when they cannot start.
 * @example
 * const relay = await createRelay({ config, logger })
 * const app = createApp([relay], { logger, internalToken })
 */
export async function createRelay(deps: RelayDeps): Promise<RelayModule> {
  const events = createRelayEvents(deps.config.events, deps.logger, deps.database, deps.config.cluster?.nodeId);
  // Before the workers start: their first events already take ids after the log's newest.
  await events.start();
  let media: MediaService;
  try {
    media = await createMedia(deps.config.media, deps.logger, { ...deps.media, bus: events.bus });
  } catch (error) {
    // Nothing left running: the log's follower stops with the failed start.
    await events.flush({ deadlineMs: 0 });
    throw error;
  }
  // Registered once its workers run: the other nodes may place rooms here from its first heartbeat.
  // Redis not answering does not stop the start: the node starts degraded and registers when it can.
  let span: Span | undefined;
  const cluster = deps.config.cluster
    ? createClusterNode({ config: deps.config.cluster, pipe: deps.config.media.pipe, media, bus: events.bus, logger: deps.logger, onLost: (nodeId) => span?.nodeLost(nodeId) })
    : undefined;
  await cluster?.start();
  const rateLimitMode = deps.rateLimitMode ?? (() => 'memory' as const);
  // Begun by release(), beside the listeners' close (ffmpeg-stop.ts bounds each stop); awaited by stop().
  let recordingsStopping: Promise<void> | undefined;
  const stopRecordings = () => {
    if (!recordingsStopping) {
      recordingsStopping = recordings.stopAll('shutdown');
      // Awaited by stop(); this keeps a failure from being reported as unhandled meanwhile.
      recordingsStopping.catch(() => {});
    }
    return recordingsStopping;
  };
  const holds = (id: string) => media.holds(id) ?? (recordings.has(id) ? 'recording' : undefined);
  const forwarder = cluster
    ? createForwarder({
        view: () => cluster.view(),
        holds,
        lostNodeOf: (id) => cluster.lostNodeOf(id) ?? span?.lostOriginOf(id),
        discover: () => cluster.discover(),
        selfRouters: () => media.routerCount(),
        placement: createPlacement({ selfRouters: () => media.routerCount(), selfDraining: () => media.draining }),
        spread: (roomId) => span?.placeTransport(roomId) ?? Promise.resolve(undefined),
        partsOf: (roomId) => span?.partsOf(roomId) ?? [],
      })
    : undefined;
  if (cluster && forwarder && deps.config.cluster) {
    const { nodeId, maxConsumers } = deps.config.cluster;
    const token = deps.internalToken;
    const headers: Record<string, string> = token ? { 'x-internal-token': token } : {};
    span = media.attachSpan((ops) => createSpan({ nodeId, view: () => cluster.view(), token, maxConsumers, locate: (id) => forwarder.find(id, headers), logger: deps.logger }, ops));
  }
  const recordings = createRecordings({ media, bus: events.bus, config: deps.config.recordings, logger: deps.logger, plainListenIp: deps.config.media.plain.listenIp, ...deps.recordings });
  return {
    name: 'relay',
    media,
    events,
    recordings,
    cluster,
    mounts: [
      { prefix: RELAY_PREFIX, surface: 'internal', routes: createInternalApp({ media, events, rateLimitMode, cluster: () => cluster?.view(), span: () => span, holds, forward: forwarder?.middleware, recordings, turn: deps.config.turn, trustProxy: deps.config.rateLimit?.trustProxy }) },
      // WHIP and WHEP (kinds/whip/public.ts): what publishers and players reach with an endpoint's URL and token.
      { prefix: '/', surface: 'public', routes: whipPublicRoutes({ media, turn: deps.config.turn }) },
    ],
    errors: whipErrorScopes(deps.logger),
    ready: () => ({
      media: media.aliveWorkerCount() > 0 ? 'ok' : 'no live worker',
      // A draining relay takes no new clients: the proxy routes them to another machine at once.
      relay: media.draining ? 'draining' : 'ok',
    }),
    documents: {
      internal: relayDocumentPart(deps.otherEvents ?? []),
      public: {
        paths: whipDocumentPaths(),
        tags: [
          { name: 'whip', description: 'WHIP (RFC 9725): publish into a room with one POST of an SDP offer' },
          { name: 'whep', description: 'WHEP: play a room with one POST of an SDP offer' },
        ],
        securitySchemes: { whipBearer: { type: 'http', scheme: 'bearer', description: 'the token POST /internal/v1/whip-endpoints (or whep-endpoints) returned' } },
      },
    },
    collect(registry) {
      registerRelayMetrics(registry, media);
      registerEventMetrics(registry, events);
      cluster?.collect(registry);
      if (forwarder) registerForwardMetrics(registry, forwarder);
    },
    async closeRooms() {
      await recordings.stopAll('shutdown');
      return media.closeRouters();
    },
    release() {
      // Open event streams would hold the listeners' close: they end first (clients reconnect with
      // Last-Event-ID to wherever the relay comes back). The recordings begin to stop meanwhile.
      events.endStreams();
      void stopRecordings();
    },
    async stop({ deadlineMs }) {
      const started = Date.now();
      // Out of the cluster first: the other nodes stop placing rooms here at once.
      await cluster?.stop();
      // Recordings first, while their RTP still flows: ffmpeg then finalises each file at once.
      await stopRecordings();
      recordings.close();
      // Closing the media publishes the shutdown events (router.closed `shutdown`, ...); the webhook
      // then gets what time is left to deliver them.
      await media.close();
      await events.flush({ deadlineMs: Math.max(0, deadlineMs - (Date.now() - started)) });
    },
  };
}

/**
 * What the relay adds to the internal document beside the operations its routes generate: the event
 * stream and the webhook. The surface's title, description and token (what the app puts on every
 * internal path, whichever modules are composed) are the document builder's (src/docs/document.ts).
 */
function relayDocumentPart(otherEvents: readonly EventCatalog[]): DocumentPart {
  return {
    paths: eventStreamPath(undefined, otherEvents),
    webhooks: eventWebhooks(otherEvents),
  };
}
