// The answers' shapes, built field by field from the engine's objects (never spread).
import type { types as ms } from 'mediasoup';
import { z } from 'zod';
import type { RateLimitMode } from '../../http/rate-limit-store.js';
import packageJson from '../../../package.json' with { type: 'json' };
import { formatTime } from '../../time.js';
import type { RelayEventsInfo } from '../events/index.js';
import type { MediaInfo } from '../index.js';
import {
  KIND_PLURALS,
  type ConsumerEntry,
  type DataConsumerEntry,
  type DataProducerEntry,
  type KindPlural,
  type ProducerEntry,
  type TransportEntry,
} from '../registry/kinds.js';
import type { RouterState, RouterSummary } from '../ops/routers.js';
import { timeString } from './docs.js';

/** The id twice: `routerId` is the field a signaling server written in Go reads (docs/media-relay.md). */
export function routerView(router: ms.Router) {
  return { id: router.id, routerId: router.id, rtpCapabilities: router.rtpCapabilities };
}

/**
 * One shape whatever the engine: mediasoup 3.11 names the candidate's address `ip`, current
 * mediasoup (and mediasoup-client) `address`; both are filled.
 */
export function iceCandidateView(candidate: ms.IceCandidate) {
  const named = candidate as unknown as { ip?: string; address?: string };
  const address = (named.address ?? named.ip)!;
  return {
    foundation: candidate.foundation,
    priority: candidate.priority,
    address,
    ip: address,
    protocol: candidate.protocol,
    port: candidate.port,
    type: candidate.type,
    ...(candidate.tcpType ? { tcpType: candidate.tcpType } : {}),
  };
}

export function transportView({ transport, routerId, direction }: TransportEntry) {
  return {
    id: transport.id,
    routerId,
    direction,
    iceParameters: transport.iceParameters,
    iceCandidates: transport.iceCandidates.map(iceCandidateView),
    dtlsParameters: transport.dtlsParameters,
    ...(transport.sctpParameters ? { sctpParameters: transport.sctpParameters } : {}),
  };
}

export function producerView(producer: ms.Producer, transportId: string) {
  return { id: producer.id, transportId, kind: producer.kind, type: producer.type, paused: producer.paused };
}

export function consumerView({ consumer, transportId, producerId }: ConsumerEntry) {
  return {
    id: consumer.id,
    transportId,
    producerId,
    kind: consumer.kind,
    type: consumer.type,
    rtpParameters: consumer.rtpParameters,
    paused: consumer.paused,
    producerPaused: consumer.producerPaused,
  };
}

export function consumerStateView(consumer: ms.Consumer) {
  return { id: consumer.id, paused: consumer.paused, producerPaused: consumer.producerPaused };
}

/**
 * GET /internal/info's answer. Strict objects: a field the endpoint returns but this schema omits
 * fails the test that checks answers against it, so the OpenAPI document generated from it cannot drift.
 */
export const infoSchema = z.strictObject({
  version: z.string(),
  started_at: timeString,
  uptime_s: z.int(),
  draining: z.boolean().describe('true once a drain has begun (SIGTERM or POST /internal/v1/drain): new routers are refused with DRAINING'),
  workers: z.array(
    z.strictObject({
      pid: z.int().nullable().describe('of the live worker, or of the last one while its slot waits for a restart'),
      alive: z.boolean(),
      restarts: z.int(),
      deaths: z.int(),
      routers: z.int(),
      port: z.int(),
      lastRestartDelayMs: z.int().nullable().describe('delay of the restart scheduled last; null before the first death'),
      counts: z
        .strictObject(Object.fromEntries(KIND_PLURALS.map((plural) => [plural, z.int()])) as Record<KindPlural, z.ZodInt>)
        .describe("what the live worker holds (all 0 while the slot waits for a restart): a placement's load figures"),
      cpuMs: z
        .number()
        .nullable()
        .describe("CPU time (user + system, ms) the live worker has used, from mediasoup's getResourceUsage; null while the slot waits for a restart"),
    }),
  ),
  counts: z.strictObject(Object.fromEntries(KIND_PLURALS.map((plural) => [plural, z.int()])) as Record<KindPlural, z.ZodInt>),
  limits: z.strictObject({
    maxRouters: z.int(),
    maxTransportsPerRouter: z.int(),
    maxProducersPerRouter: z.int(),
    maxConsumersPerRouter: z.int(),
    rtcMinPort: z.int(),
    rtcMaxPort: z.int(),
  }),
  largestRouter: z.strictObject({ transports: z.int(), producers: z.int(), consumers: z.int() }).describe('the most of each kind any one router holds'),
  rate_limits: z
    .strictObject({ store: z.enum(['memory', 'redis', 'memory-fallback']) })
    .describe('where the account API rate limits count: memory (no REDIS_URL), redis (shared), memory-fallback (Redis failing)'),
  events: z.strictObject({
    lastId: z.string().describe('id of the last event published (resume point of a new stream)'),
    buffered: z.int().describe('events held for replay'),
    streams: z.int().describe('event streams open now'),
    webhook: z.looseObject({ enabled: z.boolean() }).describe('delivery figures when EVENTS_WEBHOOK_URL is set'),
  }),
});

/** What /internal/info says beside the relay's own figures. */
export interface ServiceInfo {
  rateLimitStore: RateLimitMode;
  /** CPU ms of each slot's live worker (MediaService.workerStats), by slot index. */
  workerCpuMs?: ReadonlyMap<number, number>;
  events: RelayEventsInfo;
}

export function infoView(info: MediaInfo, service: ServiceInfo, now = Date.now()): z.infer<typeof infoSchema> {
  return {
    version: packageJson.version,
    started_at: formatTime(info.startedAt),
    uptime_s: Math.floor((now - info.startedAt.getTime()) / 1000),
    draining: info.draining,
    workers: info.workers.map((worker, slot) => ({ ...worker, cpuMs: worker.alive ? (service.workerCpuMs?.get(slot) ?? null) : null })),
    counts: info.counts,
    limits: info.limits,
    largestRouter: info.largestRouter,
    rate_limits: { store: service.rateLimitStore },
    events: { ...service.events, webhook: { ...service.events.webhook } },
  };
}

// Data producers and consumers (POST /v1/data-producers, /v1/data-consumers, and in GET /v1/routers/:id).
const sctpStreamParametersViewSchema = z
  .object({ streamId: z.int(), ordered: z.boolean(), maxPacketLifeTime: z.int().optional(), maxRetransmits: z.int().optional() })
  .nullable();

export const dataProducerViewSchema = z.object({
  id: z.string(),
  transportId: z.string(),
  sctpStreamParameters: sctpStreamParametersViewSchema,
  label: z.string(),
  protocol: z.string(),
});

export const dataConsumerViewSchema = z.object({
  id: z.string(),
  transportId: z.string(),
  dataProducerId: z.string(),
  sctpStreamParameters: sctpStreamParametersViewSchema,
  label: z.string(),
  protocol: z.string(),
});

export function dataProducerView({ dataProducer, transportId }: DataProducerEntry): z.infer<typeof dataProducerViewSchema> {
  return {
    id: dataProducer.id,
    transportId,
    sctpStreamParameters: sctpView(dataProducer.sctpStreamParameters),
    label: dataProducer.label,
    protocol: dataProducer.protocol,
  };
}

export function dataConsumerView({ dataConsumer, transportId, dataProducerId }: DataConsumerEntry): z.infer<typeof dataConsumerViewSchema> {
  return {
    id: dataConsumer.id,
    transportId,
    dataProducerId,
    sctpStreamParameters: sctpView(dataConsumer.sctpStreamParameters),
    label: dataConsumer.label,
    protocol: dataConsumer.protocol,
  };
}

/** Field by field: streamId and ordered always, the partial-reliability member only when set. */
function sctpView(p: { streamId: number; ordered?: boolean; maxPacketLifeTime?: number; maxRetransmits?: number } | undefined) {
  if (!p) return null;
  return {
    streamId: p.streamId,
    ordered: p.ordered ?? true,
    ...(p.maxPacketLifeTime !== undefined ? { maxPacketLifeTime: p.maxPacketLifeTime } : {}),
    ...(p.maxRetransmits !== undefined ? { maxRetransmits: p.maxRetransmits } : {}),
  };
}

// State to reconcile from (GET /v1/routers, GET /v1/routers/:id): each answer's schema, which the
// OpenAPI document is generated from and the tests check answers against, beside its view.
/** appData as the relay answers it (whatever was accepted at creation); bounds.ts appDataSchema checks it on the way in. */
const appDataViewSchema = z.record(z.string(), z.unknown());
const roomCountsSchema = z.object({ transports: z.int(), producers: z.int(), consumers: z.int(), dataProducers: z.int(), dataConsumers: z.int() });

export const routerSummarySchema = z.object({
  id: z.string(),
  appData: appDataViewSchema,
  createdAt: timeString,
  workerPid: z.int().describe("pid of the worker of the room's oldest live part"),
  workerPids: z
    .array(z.int())
    .describe('pids of every worker holding part of the room (one mediasoup router each, oldest first): a room spreads once a worker carries MEDIASOUP_WORKER_MAX_CONSUMERS consumers'),
  counts: roomCountsSchema,
});

export const routerListSchema = z.object({ routers: z.array(routerSummarySchema) });

export const producerStateSchema = z.object({ id: z.string(), kind: z.enum(['audio', 'video']), paused: z.boolean(), appData: appDataViewSchema });

export const consumerReconcileSchema = z.object({
  id: z.string(),
  producerId: z.string(),
  paused: z.boolean(),
  producerPaused: z.boolean(),
  appData: appDataViewSchema,
});

export const transportStateSchema = z.object({
  id: z.string(),
  direction: z.enum(['send', 'recv']),
  workerPid: z.int().describe('pid of the worker holding the transport (and its producers and consumers)'),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  iceState: z.string().describe("mediasoup's iceState: new, connected, completed, disconnected, closed"),
  dtlsState: z.string().describe("mediasoup's dtlsState: new, connecting, connected, failed, closed"),
  appData: appDataViewSchema,
  producers: z.array(producerStateSchema),
  consumers: z.array(consumerReconcileSchema),
  dataProducers: z.array(dataProducerViewSchema.extend({ appData: appDataViewSchema })).describe('on a send transport created with enableSctp'),
  dataConsumers: z.array(dataConsumerViewSchema.extend({ appData: appDataViewSchema })).describe('on a recv transport created with enableSctp'),
});

export const pipeTransportStateSchema = z.object({
  id: z.string(),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  appData: appDataViewSchema,
  producers: z.array(producerStateSchema).describe("producers received from another relay (their ids are the other relay's)"),
  consumers: z.array(consumerReconcileSchema).describe("this room's producers sent to another relay"),
});

export const routerStateSchema = routerSummarySchema.extend({
  rtpCapabilities: appDataViewSchema,
  transports: z.array(transportStateSchema),
  pipeTransports: z.array(pipeTransportStateSchema).describe('pipe transports to other relays (cascading)'),
});

export function routerSummaryView({ entry, counts }: RouterSummary): z.infer<typeof routerSummarySchema> {
  return {
    id: entry.router.id,
    appData: entry.router.appData,
    createdAt: formatTime(entry.createdAt),
    workerPid: entry.worker.pid,
    workerPids: [...entry.parts.keys()].map((worker) => worker.pid),
    counts: {
      transports: counts.transports,
      producers: counts.producers,
      consumers: counts.consumers,
      dataProducers: counts.dataProducers,
      dataConsumers: counts.dataConsumers,
    },
  };
}

function producerStateView({ producer }: ProducerEntry): z.infer<typeof producerStateSchema> {
  return { id: producer.id, kind: producer.kind, paused: producer.paused, appData: producer.appData };
}

function consumerReconcileView({ consumer, producerId }: ConsumerEntry): z.infer<typeof consumerReconcileSchema> {
  return { id: consumer.id, producerId, paused: consumer.paused, producerPaused: consumer.producerPaused, appData: consumer.appData };
}

export function routerStateView(state: RouterState): z.infer<typeof routerStateSchema> {
  return {
    ...routerSummaryView(state),
    rtpCapabilities: state.entry.router.rtpCapabilities as unknown as Record<string, unknown>,
    transports: state.transports.map(({ entry, producers, consumers, dataProducers, dataConsumers }) => ({
      id: entry.transport.id,
      direction: entry.direction,
      workerPid: entry.worker.pid,
      connected: entry.connected,
      iceState: entry.transport.iceState,
      dtlsState: entry.transport.dtlsState,
      appData: entry.transport.appData,
      producers: producers.map(producerStateView),
      consumers: consumers.map(consumerReconcileView),
      dataProducers: dataProducers.map((p) => ({ ...dataProducerView(p), appData: p.dataProducer.appData })),
      dataConsumers: dataConsumers.map((c) => ({ ...dataConsumerView(c), appData: c.dataConsumer.appData })),
    })),
    pipeTransports: state.pipeTransports.map(({ entry, producers, consumers }) => ({
      id: entry.pipeTransport.id,
      connected: entry.connected,
      appData: entry.pipeTransport.appData,
      producers: producers.map(producerStateView),
      consumers: consumers.map(consumerReconcileView),
    })),
  };
}
