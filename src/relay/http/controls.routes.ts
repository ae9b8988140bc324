// Controls of live producers, consumers and transports (issue 13): mounted beside each family's own
// routes in app.ts. Every state change goes through mediasoup's API, so its observers fire.
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import { anyObject, notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import { maxIncomingBitrateBody, preferredLayersBody, priorityBody } from '../contract/controls.js';
import { jsonBody } from './validator.js';
import { consumerStateView } from './views.js';

/** The engine's stats entries, as mediasoup reports them (objects of numbers and strings). */
type Stats = Record<string, string | number | boolean | null>[];

export function producerControlsRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/:id/pause', async (c) => {
      const producer = await media.forRequest(c.get('requestId')).pauseProducer(c.req.param('id'));
      return c.json({ id: producer.id, paused: producer.paused }, 200);
    })
    .post('/:id/resume', async (c) => {
      const producer = await media.forRequest(c.get('requestId')).resumeProducer(c.req.param('id'));
      return c.json({ id: producer.id, paused: producer.paused }, 200);
    })
    .get('/:id/stats', async (c) => c.json((await media.forRequest(c.get('requestId')).getStats('producer', c.req.param('id'))) as Stats, 200));
}

export function consumerControlsRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/:id/pause', async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).pauseConsumer(c.req.param('id'));
      return c.json(consumerStateView(consumer), 200);
    })
    .post('/:id/preferred-layers', jsonBody(preferredLayersBody), async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).setConsumerPreferredLayers(c.req.param('id'), c.req.valid('json'));
      return c.json({ id: consumer.id, preferredLayers: consumer.preferredLayers ?? null, currentLayers: consumer.currentLayers ?? null }, 200);
    })
    .post('/:id/priority', jsonBody(priorityBody), async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).setConsumerPriority(c.req.param('id'), c.req.valid('json').priority);
      return c.json({ id: consumer.id, priority: consumer.priority }, 200);
    })
    .post('/:id/key-frame', async (c) => {
      await media.forRequest(c.get('requestId')).requestConsumerKeyFrame(c.req.param('id'));
      return c.body(null, 204);
    })
    .get('/:id/stats', async (c) => c.json((await media.forRequest(c.get('requestId')).getStats('consumer', c.req.param('id'))) as Stats, 200));
}

export function transportControlsRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/:id/restart-ice', async (c) => {
      const id = c.req.param('id');
      const iceParameters = await media.forRequest(c.get('requestId')).restartTransportIce(id);
      return c.json({ id, iceParameters }, 200);
    })
    .post('/:id/max-incoming-bitrate', jsonBody(maxIncomingBitrateBody), async (c) => {
      await media.forRequest(c.get('requestId')).setTransportMaxIncomingBitrate(c.req.param('id'), c.req.valid('json').bitrate);
      return c.body(null, 204);
    })
    .get('/:id/stats', async (c) => c.json((await media.forRequest(c.get('requestId')).getStats('transport', c.req.param('id'))) as Stats, 200));
}

const layers = z.object({ spatialLayer: z.int(), temporalLayer: z.int().optional() }).nullable();
const statsArray = z.array(anyObject);
const stateOf = (what: string) => z.object({ id: z.string(), paused: z.boolean() }).describe(what);

/** The OpenAPI operations of these routes. */
export const controlsDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/producers/{id}/pause',
    summary: 'Pause a producer (mute): its consumers report producerPaused',
    success: { status: 200, schema: stateOf('paused: true'), description: 'paused' },
    errors: [notFoundDoc('producer')],
  },
  {
    method: 'post',
    path: '/internal/v1/producers/{id}/resume',
    summary: 'Resume a producer (unmute)',
    success: { status: 200, schema: stateOf('paused: false'), description: 'resumed' },
    errors: [notFoundDoc('producer')],
  },
  {
    method: 'get',
    path: '/internal/v1/producers/{id}/stats',
    summary: "The producer's RTP stats, as the engine reports them (one entry per stream)",
    success: { status: 200, schema: statsArray, description: 'stats' },
    errors: [notFoundDoc('producer')],
  },
  {
    method: 'post',
    path: '/internal/v1/consumers/{id}/pause',
    summary: 'Pause a consumer (stop forwarding to this receiver)',
    success: { status: 200, schema: z.object({ id: z.string(), paused: z.literal(true), producerPaused: z.boolean() }), description: 'paused' },
    errors: [notFoundDoc('consumer')],
  },
  {
    method: 'post',
    path: '/internal/v1/consumers/{id}/preferred-layers',
    summary: 'Choose the spatial (and temporal) layer a simulcast or SVC consumer forwards',
    body: preferredLayersBody,
    success: {
      status: 200,
      schema: z.object({ id: z.string(), preferredLayers: layers, currentLayers: layers }),
      description: 'the layers now preferred, and those forwarded (null until the engine has chosen one)',
    },
    errors: [VALIDATION, notFoundDoc('consumer'), ['CONFLICT', 409, 'the consumer is not simulcast or SVC; details {consumerId, type}']],
  },
  {
    method: 'post',
    path: '/internal/v1/consumers/{id}/priority',
    summary: 'Set the share of the available bitrate this consumer gets (1-255)',
    body: priorityBody,
    success: { status: 200, schema: z.object({ id: z.string(), priority: z.int() }), description: 'priority set' },
    errors: [VALIDATION, notFoundDoc('consumer')],
  },
  {
    method: 'post',
    path: '/internal/v1/consumers/{id}/key-frame',
    summary: 'Ask the sender for a key frame (PLI/FIR to the producer)',
    success: { status: 204, schema: null, description: 'requested' },
    errors: [notFoundDoc('consumer')],
  },
  {
    method: 'get',
    path: '/internal/v1/consumers/{id}/stats',
    summary: "The consumer's RTP stats (its own and its producer's stream)",
    success: { status: 200, schema: statsArray, description: 'stats' },
    errors: [notFoundDoc('consumer')],
  },
  {
    method: 'post',
    path: '/internal/v1/transports/{id}/restart-ice',
    summary: 'Restart ICE: new local usernameFragment and password for the client to use',
    success: { status: 200, schema: z.object({ id: z.string(), iceParameters: anyObject }), description: 'the new ICE parameters' },
    errors: [notFoundDoc('transport')],
  },
  {
    method: 'post',
    path: '/internal/v1/transports/{id}/max-incoming-bitrate',
    summary: 'Cap the bitrate the transport receives (bps, 10 000-100 000 000)',
    body: maxIncomingBitrateBody,
    success: { status: 204, schema: null, description: 'set' },
    errors: [VALIDATION, notFoundDoc('transport')],
  },
  {
    method: 'get',
    path: '/internal/v1/transports/{id}/stats',
    summary: "The transport's stats (ICE, DTLS, bytes and bitrates)",
    success: { status: 200, schema: statsArray, description: 'stats' },
    errors: [notFoundDoc('transport')],
  },
];
