import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import { capacityDoc, notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import { createProducerBody } from '../contract/rtp.js';
import { jsonBody } from './validator.js';
import { producerView } from './views.js';

export function producersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createProducerBody), async (c) => {
      const body = c.req.valid('json');
      const producer = await media.forRequest(c.get('requestId')).createProducer(body);
      return c.json(producerView(producer, body.transportId), 201);
    })
    .delete('/:id', (c) => {
      media.closeProducer(c.req.param('id'));
      return c.body(null, 204);
    });
}

/** The OpenAPI operations of these routes. */
export const producersDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/producers',
    summary: 'Create a producer on a send transport',
    body: createProducerBody,
    success: {
      status: 201,
      schema: z.object({ id: z.string(), transportId: z.string(), kind: z.enum(['audio', 'video']), type: z.string(), paused: z.boolean() }),
      description: 'the producer',
    },
    errors: [
      VALIDATION,
      notFoundDoc('transport'),
      ['CONFLICT', 409, 'the transport is a recv transport; details {transportId, direction}'],
      capacityDoc('producers'),
    ],
  },
  {
    method: 'delete',
    path: '/internal/v1/producers/{id}',
    summary: 'Close a producer (its consumers close with it)',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('producer')],
  },
];
