// The internal media relay API (Area B): the guard, the body limit, and one Hono per
// resource family, chained so `hc<InternalApp>` gets the types.
import { Hono, type Context } from 'hono';
import { bodyLimit } from '../../http/body-limit.js';
import type { AppDeps, AppEnv } from '../../app.js';
import { internalToken } from '../../http/internal-token.js';
import { validationError } from '../errors.js';
import { consumersRoutes } from './consumers.routes.js';
import { consumerControlsRoutes, producerControlsRoutes, transportControlsRoutes } from './controls.routes.js';
import { dataConsumersRoutes, dataProducersRoutes } from './data.routes.js';
import { pipesRoutes } from './pipes.routes.js';
import { producersRoutes } from './producers.routes.js';
import { routersRoutes } from './routers.routes.js';
import { transportsRoutes } from './transports.routes.js';
import { infoView } from './views.js';

export const INTERNAL_BODY_LIMIT = 256 * 1024;

/**
 * Everything under `/internal`: the token guard first (so an unknown path answers 401 before 404),
 * then the body limit, then the resources. Errors thrown anywhere in it are answered in the relay's
 * shape by the app's onError (`handleRelayError` for every path under /internal).
 * @example app.route('/internal', createInternalApp(deps))
 */
export function createInternalApp(deps: AppDeps) {
  const { media } = deps;
  const tooLarge = (c: Context) => c.json(validationError([{ path: '', message: 'body too large' }], 'request body exceeds 256 KiB').toBody(), 413);
  return new Hono<AppEnv>()
    .use(internalToken({ token: deps.internalToken }))
    .use(bodyLimit({ maxSize: INTERNAL_BODY_LIMIT, onError: tooLarge }))
    .get('/info', async (c) => {
      const workerCpuMs = new Map((await media.workerStats()).map((stats) => [stats.slot, stats.cpuUserMs + stats.cpuSystemMs]));
      return c.json(infoView(media.info(), { rateLimitStore: deps.rateLimitStores?.mode() ?? 'memory', events: deps.events.info(), workerCpuMs }), 200);
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
