// The internal media relay API: one OpenAPIHono per resource family, each serving its routes of the
// contract (src/relay/contract/), mounted here; the event stream beside them. The OpenAPI document's
// relay operations are generated from these routes (src/docs/document.ts).
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { clusterRoutes } from '../cluster/routes.js';
import type { Span } from '../cluster/span.js';
import { FAMILIES } from '../kinds/index.js';
import type { Recordings } from '../recordings/recorder.js';
import { iceServersRoutes, type TurnSettings } from './ice-servers.routes.js';
import { recordingsRoutes } from './recordings.routes.js';
import { serviceRoutes, type ServiceRoutesDeps } from './service.routes.js';
import { webhookRoutes } from './webhook.routes.js';

export type InternalAppDeps = ServiceRoutesDeps & {
  /** What this node holds under an id (GET /v1/cluster/resources/{id}). */
  holds: (id: string) => string | undefined;
  /** Cluster nodes only: the rooms that span nodes (node-to-node routes under /v1/cluster). */
  span?: () => Span | undefined;
  /** Cluster nodes only: carries calls about another node's resources to it (cluster/forward.ts). */
  forward?: MiddlewareHandler<AppEnv> | undefined;
  recordings: Recordings;
  /** TURN: when set, transports' answers carry `iceServers`; POST /v1/ice-servers hands them out. */
  turn?: TurnSettings;
  /** TRUST_PROXY: whether a forwarded host names the public origin (WHIP/WHEP endpoint URLs). */
  trustProxy?: 'none' | 'fly' | 'xff' | undefined;
};

/**
 * The relay's routes under RELAY_PREFIX (`/internal`). The app puts the internal token guard (an
 * unknown path answers 401 before 404) and the 256 KiB body limit before them; errors thrown anywhere
 * in them are answered in the internal shape by the app's onError.
 * @example app.route('/internal', createInternalApp({ media, events, rateLimitMode }))
 */
export function createInternalApp(deps: InternalAppDeps) {
  const app = new OpenAPIHono<AppEnv>();
  // First: a call about another node's resource is answered by that node, before any route here.
  if (deps.forward) app.use('/v1/*', deps.forward);
  return app
    .route('/', serviceRoutes(deps))
    .route('/', clusterRoutes({ view: () => deps.cluster?.(), holds: deps.holds, ...(deps.span ? { span: deps.span } : {}) }))
    .route('/v1', deps.events.streams.routes)
    .route('/', familyRoutes(deps))
    .route('/', recordingsRoutes(deps.recordings))
    .route('/', iceServersRoutes(deps.turn))
    .route('/', webhookRoutes(deps.events.deliveries));
}

/** Every resource family's routes (kinds/index.ts), in the table's order. */
function familyRoutes({ media, turn, trustProxy }: InternalAppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  for (const row of Object.values(FAMILIES)) app.route('/', row.routes(media, { turn, ...(trustProxy ? { trustProxy } : {}) }));
  return app;
}
