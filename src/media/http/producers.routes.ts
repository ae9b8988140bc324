import { Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import type { MediaService } from '../index.js';
import { createProducerBody } from './schemas.js';
import { jsonBody } from './validator.js';
import { producerView } from './views.js';

export function producersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createProducerBody), async (c) => {
      const body = c.req.valid('json');
      const producer = await media.createProducer(body);
      return c.json(producerView(producer, body.transportId), 201);
    })
    .delete('/:id', (c) => {
      media.closeProducer(c.req.param('id'));
      return c.body(null, 204);
    });
}
