// Routers (rooms): create, list, read with everything in them (what a restarted signaling server
// rebuilds its map from), close.
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { appDataView, timeString } from '../../contract/common.js';
import { dataConsumerSchema, dataProducerSchema } from '../data/contract.js';
import { errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { mediaCodecsSchema, rtpCapabilitiesView } from '../../contract/rtp.js';
import { speakerDetectionSchema } from '../../contract/speakers.js';

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

export const producerStateSchema = z.object({ id: z.string(), kind: z.enum(['audio', 'video']), paused: z.boolean(), appData: appDataView });

export const consumerReconcileSchema = z.object({
  id: z.string(),
  producerId: z.string(),
  paused: z.boolean(),
  producerPaused: z.boolean(),
  appData: appDataView,
});

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

export const pipeTransportStateSchema = z.object({
  id: z.string(),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  appData: appDataView,
  producers: z.array(producerStateSchema).describe("producers received from another relay (their ids are the other relay's)"),
  consumers: z.array(consumerReconcileSchema).describe("this room's producers sent to another relay"),
});

export const plainTransportStateSchema = z.object({
  id: z.string(),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  comedia: z.boolean(),
  rtcpMux: z.boolean(),
  appData: appDataView,
  producers: z.array(producerStateSchema).describe('RTP received from an ingest sender'),
  consumers: z.array(consumerReconcileSchema).describe("this room's producers sent out as plain RTP (recordings among them)"),
});

export const routerStateSchema = routerSummarySchema.extend({
  rtpCapabilities: appDataView,
  transports: z.array(transportStateSchema),
  pipeTransports: z.array(pipeTransportStateSchema).describe('pipe transports to other relays (cascading)'),
  plainTransports: z.array(plainTransportStateSchema).describe('plain RTP transports (ingest, recordings)'),
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

export const getRouter = relayRoute({
  method: 'get',
  path: '/v1/routers/{id}',
  summary: "A router with its transports, each transport's producers and consumers (bounded by the per-router caps)",
  success: { 200: { description: 'the router and everything in it', schema: routerStateSchema } },
  errors: [notFoundRow('router')],
});

export const closeRouter = relayRoute({
  method: 'delete',
  path: '/v1/routers/{id}',
  summary: 'Close a router (its transports, producers and consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('router')],
});
