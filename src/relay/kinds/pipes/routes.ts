// Pipe transports between relays (cascading): the contract's routes (contract.ts) -> ops -> views.
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import {
  closePipeTransport,
  connectPipeTransport,
  createPipeConsumer,
  createPipeProducer,
  createPipeTransport,
  type pipeConsumerSchema,
  type pipeTransportSchema,
} from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import type { ConsumerEntry } from '../../registry/kinds.js';
import type { PipeTransportEntry } from './row.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

export function pipesRoutes(media: FamilyMedia<typeof ops>) {
  return relayRouter()
    .openapi(withJsonBody(createPipeTransport), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createPipeTransport(c.req.valid('json'));
      return c.json(pipeTransportView(entry), 201);
    })
    .openapi(withJsonBody(connectPipeTransport), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).connectPipeTransport(c.req.valid('param').id, c.req.valid('json'));
      return c.json({ id: entry.pipeTransport.id, connected: true as const }, 200);
    })
    .openapi(withJsonBody(createPipeConsumer), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createPipeConsumer(c.req.valid('param').id, c.req.valid('json'));
      return c.json(pipeConsumerView(entry), 201);
    })
    .openapi(withJsonBody(createPipeProducer), async (c) => {
      const producer = await media.forRequest(c.get('requestId')).createPipeProducer(c.req.valid('param').id, c.req.valid('json'));
      return c.json({ id: producer.id, kind: producer.kind, paused: producer.paused }, 201);
    })
    .openapi(closePipeTransport, (c) => {
      media.closePipeTransport(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

export function pipeTransportView({ pipeTransport, routerId }: PipeTransportEntry): z.output<typeof pipeTransportSchema> {
  const { ip, port } = pipeAddressOf(pipeTransport);
  const srtp = pipeTransport.srtpParameters;
  return {
    id: pipeTransport.id,
    routerId,
    ip,
    port,
    ...(srtp ? { srtpParameters: { cryptoSuite: srtp.cryptoSuite, keyBase64: srtp.keyBase64 } } : {}),
  };
}

function pipeConsumerView({ consumer, producerId }: ConsumerEntry): z.output<typeof pipeConsumerSchema> {
  return {
    id: consumer.id,
    producerId,
    kind: consumer.kind,
    rtpParameters: consumer.rtpParameters,
    paused: consumer.paused,
    producerPaused: consumer.producerPaused,
  };
}

/**
 * The address the other relay is told: mediasoup 3.11 calls it `localIp`, upstream `localAddress`
 * (the announced address when one is set).
 */
function pipeAddressOf(pipeTransport: ms.PipeTransport): { ip: string; port: number } {
  const tuple = pipeTransport.tuple as unknown as { localIp?: string; localAddress?: string; localPort: number };
  return { ip: (tuple.localAddress ?? tuple.localIp)!, port: tuple.localPort };
}
