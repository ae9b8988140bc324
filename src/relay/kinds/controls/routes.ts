// Controls of live producers, consumers and transports (contract.ts), mounted beside each
// family's own routes in app.ts. Every state change goes through the ops, so mediasoup's observers fire.
import type { z } from 'zod';
import {
  consumerStats,
  pauseConsumer,
  pauseProducer,
  producerStats,
  requestConsumerKeyFrame,
  restartTransportIce,
  resumeProducer,
  setConsumerPreferredLayers,
  setConsumerPriority,
  setTransportMaxIncomingBitrate,
  transportStats,
  type statsSchema,
} from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import { consumerStateView } from '../consumers/routes.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

/** The engine's stats entries, as mediasoup reports them (objects of numbers, strings and nested figures). */
const statsView = (stats: unknown[]) => stats as z.output<typeof statsSchema>;

export function controlsRoutes(media: FamilyMedia<typeof ops>) {
  return relayRouter()
    .openapi(pauseProducer, async (c) => {
      const producer = await media.forRequest(c.get('requestId')).pauseProducer(c.req.valid('param').id);
      return c.json({ id: producer.id, paused: producer.paused }, 200);
    })
    .openapi(resumeProducer, async (c) => {
      const producer = await media.forRequest(c.get('requestId')).resumeProducer(c.req.valid('param').id);
      return c.json({ id: producer.id, paused: producer.paused }, 200);
    })
    .openapi(producerStats, async (c) => c.json(statsView(await media.forRequest(c.get('requestId')).getStats('producer', c.req.valid('param').id)), 200))
    .openapi(pauseConsumer, async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).pauseConsumer(c.req.valid('param').id);
      return c.json(consumerStateView(consumer), 200);
    })
    .openapi(withJsonBody(setConsumerPreferredLayers), async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).setConsumerPreferredLayers(c.req.valid('param').id, c.req.valid('json'));
      return c.json({ id: consumer.id, preferredLayers: consumer.preferredLayers ?? null, currentLayers: consumer.currentLayers ?? null }, 200);
    })
    .openapi(withJsonBody(setConsumerPriority), async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).setConsumerPriority(c.req.valid('param').id, c.req.valid('json').priority);
      return c.json({ id: consumer.id, priority: consumer.priority }, 200);
    })
    .openapi(requestConsumerKeyFrame, async (c) => {
      await media.forRequest(c.get('requestId')).requestConsumerKeyFrame(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(consumerStats, async (c) => c.json(statsView(await media.forRequest(c.get('requestId')).getStats('consumer', c.req.valid('param').id)), 200))
    .openapi(restartTransportIce, async (c) => {
      const { id } = c.req.valid('param');
      const iceParameters = await media.forRequest(c.get('requestId')).restartTransportIce(id);
      return c.json({ id, iceParameters }, 200);
    })
    .openapi(withJsonBody(setTransportMaxIncomingBitrate), async (c) => {
      await media.forRequest(c.get('requestId')).setTransportMaxIncomingBitrate(c.req.valid('param').id, c.req.valid('json').bitrate);
      return c.body(null, 204);
    })
    .openapi(transportStats, async (c) => c.json(statsView(await media.forRequest(c.get('requestId')).getStats('transport', c.req.valid('param').id)), 200));
}
