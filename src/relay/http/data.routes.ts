// Data producers and data consumers (SCTP data channels relayed through a router).
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import { notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import { createDataConsumerBody, createDataProducerBody } from '../contract/data.js';
import { jsonBody } from './validator.js';
import { dataConsumerView, dataConsumerViewSchema, dataProducerView, dataProducerViewSchema } from './views.js';

export function dataProducersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createDataProducerBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createDataProducer(c.req.valid('json'));
      return c.json(dataProducerView(entry), 201);
    })
    .delete('/:id', (c) => {
      media.closeDataProducer(c.req.param('id'));
      return c.body(null, 204);
    });
}

export function dataConsumersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createDataConsumerBody), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createDataConsumer(c.req.valid('json'));
      return c.json(dataConsumerView(entry), 201);
    })
    .delete('/:id', (c) => {
      media.closeDataConsumer(c.req.param('id'));
      return c.body(null, 204);
    });
}

const transportConflict: [string, number, string] = [
  'CONFLICT',
  409,
  'wrong transport direction, transport without enableSctp, the transport holds MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT data producers and consumers, or (data producers) the stream id is taken; details {transportId, …}',
];

/** The OpenAPI operations of these routes. */
export const dataDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/data-producers',
    summary: 'Create a data producer (an SCTP data channel the client sends on) on a send transport created with enableSctp',
    body: createDataProducerBody,
    success: {
      status: 201,
      schema: dataProducerViewSchema,
      description: 'the data producer; without sctpStreamParameters it takes the lowest free stream id, reliable and ordered',
    },
    errors: [VALIDATION, notFoundDoc('transport'), transportConflict],
  },
  {
    method: 'delete',
    path: '/internal/v1/data-producers/{id}',
    summary: 'Close a data producer (its data consumers close with it)',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('dataProducer')],
  },
  {
    method: 'post',
    path: '/internal/v1/data-consumers',
    summary: "Create a data consumer of a data producer on a recv transport created with enableSctp",
    body: createDataConsumerBody,
    success: {
      status: 201,
      schema: dataConsumerViewSchema,
      description: "the data consumer: the client opens a channel with this stream id, label and protocol",
    },
    errors: [
      VALIDATION,
      notFoundDoc('transport or dataProducer'),
      transportConflict,
      ['CAN_NOT_CONSUME', 400, 'the data producer belongs to another router'],
    ],
  },
  {
    method: 'delete',
    path: '/internal/v1/data-consumers/{id}',
    summary: 'Close a data consumer',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('dataConsumer')],
  },
];
