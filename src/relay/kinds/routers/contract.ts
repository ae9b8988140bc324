// Routers (rooms): create, list, read with everything in them (what a restarted signaling server
// rebuilds its map from), close.
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { appDataView, timeString } from '../../contract/common.js';
import { dataConsumerSchema, dataProducerSchema } from '../data/contract.js';
import { errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { mediaCodecsSchema, rtpCapabilitiesView } from '../../contract/rtp.js';
import { consumerReconcileSchema, producerStateSchema, type RoomStateShape } from '../../contract/room-state.js';
import { speakerDetectionSchema } from '../../contract/speakers.js';
import { roomStateKindsOf, type KindTable } from '../../registry/kinds.js';

export { consumerReconcileSchema, producerStateSchema } from '../../contract/room-state.js';

export const createRouterBody = z.object({
  mediaCodecs: mediaCodecsSchema.optional(),
  appData: appDataSchema.optional(),
  speakerDetection: speakerDetectionSchema.optional(),
});

export type CreateRouterBody = z.infer<typeof createRouterBody>;

export const routerSchema = z.object({
  id: z.string(),
  routerId: z.string().describe('the same as id, for signaling servers that read this name'),
  rtpCapabilities: rtpCapabilitiesView,
});

const roomCountsSchema = z.object({ transports: z.int(), producers: z.int(), consumers: z.int(), dataProducers: z.int(), dataConsumers: z.int() });

export const routerSummarySchema = z.object({
  id: z.string(),
  appData: appDataView,
  createdAt: timeString,
  workerPid: z.int().describe("pid of the worker of the room's oldest live part"),
  workerPids: z
    .array(z.int())
    .describe('pids of every worker holding part of the room (one mediasoup router each, oldest first): a room spreads once a worker carries MEDIASOUP_WORKER_MAX_CONSUMERS consumers'),
  counts: roomCountsSchema,
});

export const routerListSchema = z.object({ routers: z.array(routerSummarySchema) });


export const transportStateSchema = z.object({
  id: z.string(),
  direction: z.enum(['send', 'recv']),
  workerPid: z.int().describe('pid of the worker holding the transport (and its producers and consumers)'),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  iceState: z.string().describe("mediasoup's iceState: new, connected, completed, disconnected, closed"),
  dtlsState: z.string().describe("mediasoup's dtlsState: new, connecting, connected, failed, closed"),
  appData: appDataView,
  producers: z.array(producerStateSchema),
  consumers: z.array(consumerReconcileSchema),
  dataProducers: z.array(dataProducerSchema.extend({ appData: appDataView })).describe('on a send transport created with enableSctp'),
  dataConsumers: z.array(dataConsumerSchema.extend({ appData: appDataView })).describe('on a recv transport created with enableSctp'),
});


export const createRouter = relayRoute({
  method: 'post',
  path: '/v1/routers',
  summary: 'Create a router on the live worker with the fewest routers',
  body: createRouterBody,
  success: { 201: { description: 'the router', schema: routerSchema } },
  errors: [VALIDATION, errorRow('ROUTER_LIMIT_EXCEEDED'), errorRow('DRAINING'), errorRow('MEDIASOUP_ERROR', 'no live worker')],
});

export const listRouters = relayRoute({
  method: 'get',
  path: '/v1/routers',
  summary: 'Every open router, oldest first, with its counts: what a restarted signaling server rebuilds its map from (at most MEDIASOUP_MAX_ROUTERS)',
  success: { 200: { description: 'the open routers', schema: routerListSchema } },
  errors: [],
});

export const closeRouter = relayRoute({
  method: 'delete',
  path: '/v1/routers/{id}',
  summary: 'Close a router (its transports, producers and consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('router')],
});

/** What the kinds that stand for a transport add to a router's state, each under its plural (their rows' schemas). */
function roomStateShape(kinds: KindTable): RoomStateShape<KindTable> {
  return Object.fromEntries(roomStateKindsOf(kinds).map((kind) => [kinds[kind].plural, kinds[kind].roomState.schema])) as RoomStateShape<KindTable>;
}

/**
 * A router's state and its route: the kinds that stand for a transport add their lists to it, so both
 * are made from the kinds table (kinds/index.ts), which imports this file.
 */
export function roomStateContract(kinds: KindTable) {
  const routerStateSchema = routerSummarySchema.extend({
    rtpCapabilities: appDataView,
    transports: z.array(transportStateSchema),
    ...roomStateShape(kinds),
  });
  const getRouter = relayRoute({
    method: 'get',
    path: '/v1/routers/{id}',
    summary: "A router with its transports, each transport's producers and consumers (bounded by the per-router caps)",
    success: { 200: { description: 'the router and everything in it', schema: routerStateSchema } },
    errors: [notFoundRow('router')],
  });
  return { routerStateSchema, getRouter };
}

export type RoomStateContract = ReturnType<typeof roomStateContract>;
