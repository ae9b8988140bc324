// Pipe transports between relays (cascading): thin chains, validate -> ops -> view.
import { Hono } from 'hono';
import type { types as ms } from 'mediasoup';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import type { ConsumerEntry, PipeTransportEntry } from '../registry/kinds.js';
import { capacityDoc, notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import {
  connectPipeTransportBody,
  createPipeConsumerBody,
  createPipeProducerBody,
  createPipeTransportBody,
  pipeConnectedSchema,
  pipeConsumerSchema,
  pipeProducerSchema,
  pipeTransportSchema,
} from '../contract/pipes.js';
import { jsonBody } from './validator.js';

export function pipesRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createPipeTransportBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createPipeTransport(c.req.valid('json'));
      return c.json(pipeTransportView(entry), 201);
    })
    .post('/:id/connect', jsonBody(connectPipeTransportBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).connectPipeTransport(c.req.param('id'), c.req.valid('json'));
      return c.json({ id: entry.pipeTransport.id, connected: true as const }, 200);
    })
    .post('/:id/consumers', jsonBody(createPipeConsumerBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createPipeConsumer(c.req.param('id'), c.req.valid('json'));
      return c.json(pipeConsumerView(entry), 201);
    })
    .post('/:id/producers', jsonBody(createPipeProducerBody), async (c) => {
      const producer = await media.forRequest(c.get('requestId')).createPipeProducer(c.req.param('id'), c.req.valid('json'));
      return c.json({ id: producer.id, kind: producer.kind, paused: producer.paused }, 201);
    })
    .delete('/:id', (c) => {
      media.closePipeTransport(c.req.param('id'));
      return c.body(null, 204);
    });
}

export function pipeTransportView({ pipeTransport, routerId }: PipeTransportEntry) {
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

function pipeConsumerView({ consumer, producerId }: ConsumerEntry) {
  return {
    id: consumer.id,
    producerId,
    kind: consumer.kind,
    rtpParameters: consumer.rtpParameters as unknown as Record<string, unknown>,
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

/** The OpenAPI operations of these routes. */
export const pipesDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/pipe-transports',
    summary: "Create a pipe transport on a router, to carry media to or from the same room on another relay (SRTP by default; listens on MEDIASOUP_PIPE_LISTEN_IP)",
    body: createPipeTransportBody,
    success: { status: 201, schema: pipeTransportSchema, description: 'the pipe transport: give ip, port and srtpParameters to the other side' },
    errors: [
      VALIDATION,
      notFoundDoc('router'),
      ['CONFLICT', 409, 'pipe transports are not enabled on this relay (MEDIASOUP_PIPE_LISTEN_IP unset); details {setting}'],
      capacityDoc('pipe_transports'),
      ['MEDIASOUP_ERROR', 500, 'no port left for pipe transports (RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers all in use); details {pipeTransports, ports}'],
    ],
  },
  {
    method: 'post',
    path: '/internal/v1/pipe-transports/{id}/connect',
    summary: "Connect a pipe transport to the other relay's (once)",
    body: connectPipeTransportBody,
    success: { status: 200, schema: pipeConnectedSchema, description: 'connected' },
    errors: [
      ['VALIDATION_ERROR', 400, 'body fails its schema, or ip is not a unicast address of the pipe\'s family (unspecified, multicast, broadcast/reserved, link-local, cloud metadata, IPv4-mapped) or outside MEDIASOUP_PIPE_PEER_CIDRS; details.issues [{path: "ip", message}]'],
      notFoundDoc('pipeTransport'),
      ['CONFLICT', 409, 'already connected or being connected; details {pipeTransportId}'],
    ],
  },
  {
    method: 'post',
    path: '/internal/v1/pipe-transports/{id}/consumers',
    summary: 'Send a producer of this relay through the pipe transport (a pipe consumer; closes with the producer)',
    body: createPipeConsumerBody,
    success: { status: 201, schema: pipeConsumerSchema, description: 'the pipe consumer: give producerId, kind and rtpParameters to the other side' },
    errors: [
      VALIDATION,
      notFoundDoc('pipeTransport or producer'),
      ['CAN_NOT_CONSUME', 400, 'the producer belongs to another router; details {producerId, routerId, reason}'],
      capacityDoc('consumers'),
    ],
  },
  {
    method: 'post',
    path: '/internal/v1/pipe-transports/{id}/producers',
    summary: "Receive another relay's producer through the pipe transport, under its own id: an ordinary producer of the room from then on",
    body: createPipeProducerBody,
    success: { status: 201, schema: pipeProducerSchema, description: 'the producer' },
    errors: [
      VALIDATION,
      notFoundDoc('pipeTransport'),
      ['CONFLICT', 409, 'a resource of any kind (router, transport, pipe transport, producer, consumer, data producer or consumer, or one the engine holds) already has this id on this relay, a producer with it is being created, or an ssrc clash; details {producerId, resource, routerId?, transportId?} or {reason}'],
      capacityDoc('producers'),
    ],
  },
  {
    method: 'delete',
    path: '/internal/v1/pipe-transports/{id}',
    summary: 'Close a pipe transport (its pipe consumers, its pipe producers and their consumers close with it)',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('pipeTransport')],
  },
];
