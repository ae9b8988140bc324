// The internal media relay API (Area B): the guard, the body limit, and one Hono per
// resource family, chained so `hc<InternalApp>` gets the types.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import type { RelayEvents } from '../events/index.js';
import type { MediaService } from '../index.js';
import type { RateLimitMode } from '../../http/rate-limit-store.js';
import { consumersRoutes } from './consumers.routes.js';
import { consumerControlsRoutes, producerControlsRoutes, transportControlsRoutes } from './controls.routes.js';
import { dataConsumersRoutes, dataProducersRoutes } from './data.routes.js';
import { pipesRoutes } from './pipes.routes.js';
import { producersRoutes } from './producers.routes.js';
import { routersRoutes } from './routers.routes.js';
import { transportsRoutes } from './transports.routes.js';
import { infoView } from './views.js';

export interface InternalAppDeps {
  media: MediaService;
  events: RelayEvents;
  /** Where the rate limits count now, for /internal/info. */
  rateLimitMode: () => RateLimitMode;
}

/**
 * The relay's routes under `/internal`. The app puts the internal token guard (an unknown path
 * answers 401 before 404) and the 256 KiB body limit before them; errors thrown anywhere in them
 * are answered in the internal shape by the app's onError.
 * @example app.route('/internal', createInternalApp({ media, events, rateLimitMode }))
 */
export function createInternalApp(deps: InternalAppDeps) {
  const { media } = deps;
  return new Hono<AppEnv>()
    .get('/info', async (c) => {
      const workerCpuMs = new Map((await media.workerStats()).map((stats) => [stats.slot, stats.cpuUserMs + stats.cpuSystemMs]));
      return c.json(infoView(media.info(), { rateLimitStore: deps.rateLimitMode(), events: deps.events.info(), workerCpuMs }), 200);
    })
    // Stops new rooms only; the process exits on SIGTERM (docs/media-relay.md "Drain").
    .post('/v1/drain', (c) => {
      const { started, routers } = media.drain();
      return c.json({ draining: true as const, routers }, started ? 202 : 200);
    })
    .route('/v1', deps.events.streams.routes)
    .route('/v1/routers', routersRoutes(media))
    .route('/v1/transports', transportsRoutes(media))
    .route('/v1/producers', producersRoutes(media))
    .route('/v1/consumers', consumersRoutes(media))
    .route('/v1/transports', transportControlsRoutes(media))
    .route('/v1/producers', producerControlsRoutes(media))
    .route('/v1/consumers', consumerControlsRoutes(media))
    .route('/v1/data-producers', dataProducersRoutes(media))
    .route('/v1/data-consumers', dataConsumersRoutes(media))
    .route('/v1/pipe-transports', pipesRoutes(media));
}

export type InternalApp = ReturnType<typeof createInternalApp>;
