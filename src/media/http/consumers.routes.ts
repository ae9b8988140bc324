import { Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import type { MediaService } from '../index.js';
import { createConsumerBody } from './schemas.js';
import { jsonBody } from './validator.js';
import { consumerStateView, consumerView } from './views.js';

export function consumersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createConsumerBody), async (c) => {
      const entry = await media.createConsumer(c.req.valid('json'));
      return c.json(consumerView(entry), 201);
    })
    .post('/:id/resume', async (c) => {
      const consumer = await media.resumeConsumer(c.req.param('id'));
      return c.json(consumerStateView(consumer), 200);
    })
    .delete('/:id', (c) => {
      media.closeConsumer(c.req.param('id'));
      return c.body(null, 204);
    });
}
