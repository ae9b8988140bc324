import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import { anyObject, capacityDoc, notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import { createConsumerBody } from '../contract/rtp.js';
import { jsonBody } from './validator.js';
import { consumerStateView, consumerView } from './views.js';

export function consumersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createConsumerBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createConsumer(c.req.valid('json'));
      return c.json(consumerView(entry), 201);
    })
    .post('/:id/resume', async (c) => {
      const consumer = await media.forRequest(c.get('requestId')).resumeConsumer(c.req.param('id'));
      return c.json(consumerStateView(consumer), 200);
    })
    .delete('/:id', (c) => {
      media.closeConsumer(c.req.param('id'));
      return c.body(null, 204);
    });
}

/** The OpenAPI operations of these routes. */
export const consumersDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/consumers',
    summary: 'Create a consumer on a recv transport; always created paused',
    body: createConsumerBody,
    success: {
      status: 201,
      schema: z.object({
        id: z.string(),
        transportId: z.string(),
        producerId: z.string(),
        kind: z.enum(['audio', 'video']),
        type: z.string(),
        rtpParameters: anyObject,
        paused: z.literal(true),
        producerPaused: z.boolean(),
      }),
      description: 'the consumer (paused)',
    },
    errors: [
      VALIDATION,
      notFoundDoc('transport or producer'),
      ['CONFLICT', 409, 'the transport is a send transport; details {transportId, direction}'],
      ['CAN_NOT_CONSUME', 400, 'the capabilities cannot consume this producer'],
      capacityDoc('consumers'),
    ],
  },
  {
    method: 'post',
    path: '/internal/v1/consumers/{id}/resume',
    summary: 'Resume a consumer',
    success: { status: 200, schema: z.object({ id: z.string(), paused: z.literal(false), producerPaused: z.boolean() }), description: 'resumed' },
    errors: [notFoundDoc('consumer')],
  },
  {
    method: 'delete',
    path: '/internal/v1/consumers/{id}',
    summary: 'Close a consumer',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('consumer')],
  },
];
