import { Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import type { MediaService } from '../index.js';
import { createRouterBody } from './schemas.js';
import { jsonBody } from './validator.js';
import { routerView } from './views.js';

export function routersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createRouterBody), async (c) => {
      const router = await media.createRouter(c.req.valid('json'));
      return c.json(routerView(router), 201);
    })
    .delete('/:id', (c) => {
      media.closeRouter(c.req.param('id'));
      return c.body(null, 204);
    });
}
