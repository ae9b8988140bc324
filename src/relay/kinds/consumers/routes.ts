// Consumers: the contract's routes (contract.ts) -> ops -> views.
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import { closeConsumer, createConsumer, resumeConsumer, type consumerSchema, type consumerStateSchema } from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import type { ConsumerEntry } from '../../registry/kinds.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

export function consumersRoutes(media: FamilyMedia<typeof ops>) {
  return relayRouter()
    .openapi(withJsonBody(createConsumer), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createConsumer(c.req.valid('json'));
      return c.json(consumerView(entry), 201);
    })
    .openapi(resumeConsumer, async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).resumeConsumer(c.req.valid('param').id);
      return c.json(consumerStateView(consumer), 200);
    })
    .openapi(closeConsumer, (c) => {
      media.closeConsumer(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

export function consumerView({ consumer, transportId, producerId }: ConsumerEntry): z.output<typeof consumerSchema> {
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

export function consumerStateView(consumer: ms.Consumer): z.output<typeof consumerStateSchema> {
  return { id: consumer.id, paused: consumer.paused, producerPaused: consumer.producerPaused };
}
