import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.js';
import type { MediaService } from '../index.js';
import { anyObject, notFoundDoc, VALIDATION, type RelayOperation } from './docs.js';
import { createRouterBody } from '../contract/rtp.js';
import { jsonBody } from './validator.js';
import { routerListSchema, routerStateSchema, routerStateView, routerSummaryView, routerView } from './views.js';

export function routersRoutes(media: MediaService) {
  return new Hono<AppEnv>()
    .post('/', jsonBody(createRouterBody), async (c) => {
      const router = await media.forRequest(c.get('requestId')).createRouter(c.req.valid('json'));
      return c.json(routerView(router), 201);
    })
    .get('/', (c) => c.json({ routers: media.listRouters().map(routerSummaryView) }, 200))
    .get('/:id', (c) => c.json(routerStateView(media.getRouter(c.req.param('id'))), 200))
    .delete('/:id', (c) => {
      media.closeRouter(c.req.param('id'));
      return c.body(null, 204);
    });
}

/** The OpenAPI operations of these routes. */
export const routersDocs: RelayOperation[] = [
  {
    method: 'post',
    path: '/internal/v1/routers',
    summary: 'Create a router on the live worker with the fewest routers',
    body: createRouterBody,
    success: {
      status: 201,
      schema: z.object({ id: z.string(), routerId: z.string().describe('the same as id, for signaling servers that read this name'), rtpCapabilities: anyObject }),
      description: 'the router',
    },
    errors: [VALIDATION, ['ROUTER_LIMIT_EXCEEDED', 503, 'MEDIASOUP_MAX_ROUTERS routers already open'], ['DRAINING', 503, 'the relay is draining (SIGTERM or POST /internal/v1/drain): create the room on another relay'], ['MEDIASOUP_ERROR', 500, 'no live worker']],
  },
  {
    method: 'get',
    path: '/internal/v1/routers',
    summary: 'Every open router, oldest first, with its counts: what a restarted signaling server rebuilds its map from (at most MEDIASOUP_MAX_ROUTERS)',
    success: { status: 200, schema: routerListSchema, description: 'the open routers' },
    errors: [],
  },
  {
    method: 'get',
    path: '/internal/v1/routers/{id}',
    summary: "A router with its transports, each transport's producers and consumers (bounded by the per-router caps)",
    success: { status: 200, schema: routerStateSchema, description: 'the router and everything in it' },
    errors: [notFoundDoc('router')],
  },
  {
    method: 'delete',
    path: '/internal/v1/routers/{id}',
    summary: 'Close a router (its transports, producers and consumers close with it)',
    success: { status: 204, schema: null, description: 'closed' },
    errors: [notFoundDoc('router')],
  },
];
