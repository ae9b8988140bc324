import { Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import type { MediaService } from '../index.js';
import { connectTransportBody, createTransportBody } from './schemas.js';
import { jsonBody } from './validator.js';
import { transportView } from './views.js';

export function transportsRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createTransportBody), async (c) => {
      const entry = await media.createTransport(c.req.valid('json'));
      return c.json(transportView(entry), 201);
    })
    .post('/:id/connect', jsonBody(connectTransportBody), async (c) => {
      const entry = await media.connectTransport(c.req.param('id'), c.req.valid('json').dtlsParameters);
      return c.json({ id: entry.transport.id, connected: true as const }, 200);
    })
    .delete('/:id', (c) => {
      media.closeTransport(c.req.param('id'));
      return c.body(null, 204);
    });
}
