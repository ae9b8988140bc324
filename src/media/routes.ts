// The internal media relay API (Area B): one Hono per resource, chained so `hc<InternalApp>` gets the types.
import { Hono } from 'hono';
import { bodyLimit } from '../http/body-limit.js';
import type { types as ms } from 'mediasoup';
import packageJson from '../../package.json' with { type: 'json' };
import type { AppDeps, AppEnv } from '../app.js';
import { internalToken } from '../http/internal-token.js';
import { formatTime } from '../time.js';
import { validationError } from './errors.js';
import type { ConsumerEntry, TransportEntry } from './registry.js';
import { connectTransportBody, createConsumerBody, createProducerBody, createRouterBody, createTransportBody } from './schemas.js';
import { jsonBody } from './validator.js';

export const INTERNAL_BODY_LIMIT = 256 * 1024;

function routerView(router: ms.Router) {
  return { id: router.id, rtpCapabilities: router.rtpCapabilities };
}

function transportView({ transport, routerId, direction }: TransportEntry) {
  return {
    id: transport.id,
    routerId,
    direction,
    iceParameters: transport.iceParameters,
    iceCandidates: transport.iceCandidates,
    dtlsParameters: transport.dtlsParameters,
    ...(transport.sctpParameters ? { sctpParameters: transport.sctpParameters } : {}),
  };
}

function producerView(producer: ms.Producer, transportId: string) {
  return { id: producer.id, transportId, kind: producer.kind, type: producer.type, paused: producer.paused };
}

function consumerView({ consumer, transportId, producerId }: ConsumerEntry) {
  return {
    id: consumer.id,
    transportId,
    producerId,
    kind: consumer.kind,
    type: consumer.type,
    rtpParameters: consumer.rtpParameters,
    paused: consumer.paused,
    producerPaused: consumer.producerPaused,
  };
}

/**
 * Everything under `/internal`: the token guard first (so an unknown path answers 401 before 404),
 * then the body limit, then the resources.
 * @example app.route('/internal', createInternalApp(deps))
 */
export function createInternalApp(deps: AppDeps) {
  const { media } = deps;

  const routers = new Hono<AppEnv>()
    .post('/', jsonBody(createRouterBody), async (c) => {
      const router = await media.createRouter(c.req.valid('json'));
      return c.json(routerView(router), 201);
    })
    .delete('/:id', (c) => {
      media.closeRouter(c.req.param('id'));
      return c.body(null, 204);
    });

  const transports = new Hono<AppEnv>()
    .post('/', jsonBody(createTransportBody), async (c) => {
      const entry = await media.createTransport(c.req.valid('json'));
      return c.json(transportView(entry), 201);
    })
    .post('/:id/connect', jsonBody(connectTransportBody), async (c) => {
      const entry = await media.connectTransport(c.req.param('id'), c.req.valid('json').dtlsParameters);
      return c.json({ id: entry.transport.id, connected: true as const }, 200);
    })
    .delete('/:id', (c) => {
      media.closeTransport(c.req.param('id'));
      return c.body(null, 204);
    });

  const producers = new Hono<AppEnv>()
    .post('/', jsonBody(createProducerBody), async (c) => {
      const body = c.req.valid('json');
      const producer = await media.createProducer(body);
      return c.json(producerView(producer, body.transportId), 201);
    })
    .delete('/:id', (c) => {
      media.closeProducer(c.req.param('id'));
      return c.body(null, 204);
    });

  const consumers = new Hono<AppEnv>()
    .post('/', jsonBody(createConsumerBody), async (c) => {
      const entry = await media.createConsumer(c.req.valid('json'));
      return c.json(consumerView(entry), 201);
    })
    .post('/:id/resume', async (c) => {
      const consumer = await media.resumeConsumer(c.req.param('id'));
      return c.json({ id: consumer.id, paused: consumer.paused, producerPaused: consumer.producerPaused }, 200);
    })
    .delete('/:id', (c) => {
      media.closeConsumer(c.req.param('id'));
      return c.body(null, 204);
    });

  return new Hono<AppEnv>()
    .use(internalToken({ token: deps.internalToken }))
    .use(
      bodyLimit({
        maxSize: INTERNAL_BODY_LIMIT,
        onError: (c) => c.json(validationError([{ path: '', message: 'body too large' }], 'request body exceeds 256 KiB').toBody(), 413),
      }),
    )
    .get('/info', (c) => {
      const info = media.info();
      return c.json(
        {
          version: packageJson.version,
          started_at: formatTime(info.startedAt),
          uptime_s: Math.floor((Date.now() - info.startedAt.getTime()) / 1000),
          workers: info.workers,
          counts: info.counts,
          limits: info.limits,
        },
        200,
      );
    })
    .route('/v1/routers', routers)
    .route('/v1/transports', transports)
    .route('/v1/producers', producers)
    .route('/v1/consumers', consumers);
}

export type InternalApp = ReturnType<typeof createInternalApp>;
