// Producers: the contract's routes (contract.ts) -> ops -> views.
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import { closeProducer, createProducer, type producerSchema } from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

export function producersRoutes(media: FamilyMedia<typeof ops>) {
  return relayRouter()
    .openapi(withJsonBody(createProducer), async (c) => {
      const body = c.req.valid('json');
      const producer = await media.forRequest(c.get('requestId')).createProducer(body);
      return c.json(producerView(producer, body.transportId), 201);
    })
    .openapi(closeProducer, (c) => {
      media.closeProducer(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

export function producerView(producer: ms.Producer, transportId: string): z.output<typeof producerSchema> {
  return { id: producer.id, transportId, kind: producer.kind, type: producer.type, paused: producer.paused };
}
