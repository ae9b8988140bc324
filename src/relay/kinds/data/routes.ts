// Data producers and data consumers: the contract's routes (contract.ts) -> ops -> views.
import type { z } from 'zod';
import { closeDataConsumer, closeDataProducer, createDataConsumer, createDataProducer, type dataConsumerSchema, type dataProducerSchema } from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import type { DataConsumerEntry, DataProducerEntry } from '../../registry/kinds.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

export function dataRoutes(media: FamilyMedia<typeof ops>) {
  return relayRouter()
    .openapi(withJsonBody(createDataProducer), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createDataProducer(c.req.valid('json'));
      return c.json(dataProducerView(entry), 201);
    })
    .openapi(closeDataProducer, (c) => {
      media.closeDataProducer(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(withJsonBody(createDataConsumer), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createDataConsumer(c.req.valid('json'));
      return c.json(dataConsumerView(entry), 201);
    })
    .openapi(closeDataConsumer, (c) => {
      media.closeDataConsumer(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

export function dataProducerView({ dataProducer, transportId }: DataProducerEntry): z.output<typeof dataProducerSchema> {
  return {
    id: dataProducer.id,
    transportId,
    sctpStreamParameters: sctpView(dataProducer.sctpStreamParameters),
    label: dataProducer.label,
    protocol: dataProducer.protocol,
  };
}

export function dataConsumerView({ dataConsumer, transportId, dataProducerId }: DataConsumerEntry): z.output<typeof dataConsumerSchema> {
  return {
    id: dataConsumer.id,
    transportId,
    dataProducerId,
    sctpStreamParameters: sctpView(dataConsumer.sctpStreamParameters),
    label: dataConsumer.label,
    protocol: dataConsumer.protocol,
  };
}

/** Field by field: streamId and ordered always, the partial-reliability member only when set. */
function sctpView(p: { streamId: number; ordered?: boolean; maxPacketLifeTime?: number; maxRetransmits?: number } | undefined) {
  if (!p) return null;
  return {
    streamId: p.streamId,
    ordered: p.ordered ?? true,
    ...(p.maxPacketLifeTime !== undefined ? { maxPacketLifeTime: p.maxPacketLifeTime } : {}),
    ...(p.maxRetransmits !== undefined ? { maxRetransmits: p.maxRetransmits } : {}),
  };
}
