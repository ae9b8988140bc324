import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import { anyObject, capacityDoc, notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import { connectTransportBody, createTransportBody } from '../contract/rtp.js';
import { jsonBody } from './validator.js';
import { transportView } from './views.js';

export function transportsRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createTransportBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createTransport(c.req.valid('json'));
      return c.json(transportView(entry), 201);
    })
    .post('/:id/connect', jsonBody(connectTransportBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).connectTransport(c.req.param('id'), c.req.valid('json').dtlsParameters);
      return c.json({ id: entry.transport.id, connected: true as const }, 200);
    })
    .delete('/:id', (c) => {
      media.closeTransport(c.req.param('id'));
      return c.body(null, 204);
    });
}

/** The OpenAPI operations of these routes. */
export const transportsDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/transports',
    summary: "Create a WebRTC transport on a router (through its worker's WebRtcServer)",
    body: createTransportBody,
    success: {
      status: 201,
      schema: z.object({
        id: z.string(),
        routerId: z.string(),
        direction: z.enum(['send', 'recv']),
        iceParameters: anyObject,
        iceCandidates: z.array(
          z.object({
            foundation: z.string(),
            priority: z.number(),
            address: z.string(),
            ip: z.string().describe('the same as address (mediasoup 3.11 name)'),
            protocol: z.enum(['udp', 'tcp']),
            port: z.int(),
            type: z.string(),
            tcpType: z.string().optional(),
          }),
        ),
        dtlsParameters: anyObject,
        sctpParameters: anyObject.optional(),
      }),
      description: 'the transport',
    },
    errors: [VALIDATION, notFoundDoc('router'), capacityDoc('transports')],
  },
  {
    method: 'post',
    path: '/internal/v1/transports/{id}/connect',
    summary: "Connect a transport with the client's DTLS parameters (once)",
    body: connectTransportBody,
    success: { status: 200, schema: z.object({ id: z.string(), connected: z.literal(true) }), description: 'connected' },
    errors: [VALIDATION, notFoundDoc('transport'), ['CONFLICT', 409, 'already connected or being connected']],
  },
  {
    method: 'delete',
    path: '/internal/v1/transports/{id}',
    summary: 'Close a transport (its producers, their consumers and its own consumers close with it)',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('transport')],
  },
];
