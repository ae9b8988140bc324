// The relay's event catalog: one zod schema per type, which is at once the TypeScript type, the shape
// the tests check and the source of the OpenAPI/JSON Schema description of the stream and the webhook.
// The bus, the stream and the webhook (src/events) carry them without knowing them.
import { z } from 'zod';

/** `yyyy-MM-dd HH:mm:ss` in Asia/Shanghai (src/time.ts formatTime), the spec's format. */
export const eventTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');

export const eventId = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/)
  .describe(
    "a decimal integer, strictly increasing in the order a stream sends events; a durable event's id is the same on every instance sharing the database (docs/events.md \"Ids and resume\")",
  );

const appData = z.record(z.string(), z.unknown()).describe("the resource's appData as given at creation (the signaling server's own keys)");

const recordingAppData = z.record(z.string(), z.unknown()).describe("the recording's appData as given to POST /recordings");

/**
 * Close reasons name the NEAREST cause the relay saw: `api` when that very resource was closed by an
 * API call, `<parent>_closed` when its parent closed it (a router closed through the API yields
 * `router.closed` api, then `transport.closed` router_closed for each transport, then
 * `producer.closed` transport_closed, and a consumer on another transport `producer_closed`),
 * `worker_died` when the worker holding it died, `shutdown` when the relay closed it on its way out
 * (drain timeout or process stop).
 */
export const routerCloseReason = z.enum(['api', 'worker_died', 'shutdown']);
export const transportCloseReason = z.enum(['api', 'router_closed', 'worker_died', 'shutdown']);
export const producerCloseReason = z.enum(['api', 'transport_closed', 'router_closed', 'worker_died', 'shutdown']);
export const consumerCloseReason = z.enum(['api', 'producer_closed', 'transport_closed', 'router_closed', 'worker_died', 'shutdown', 'node_lost']);
export const dataProducerCloseReason = producerCloseReason;
export const dataConsumerCloseReason = z.enum([
  'api',
  'data_producer_closed',
  'transport_closed',
  'router_closed',
  'worker_died',
  'shutdown',
  'node_lost',
]);
/** Why a WHIP or WHEP session ended. */
export const sessionEndReason = z.enum(['api', 'endpoint_closed', 'transport_closed']);
/** Who paused or resumed a consumer: the API on that consumer, or its producer pausing/resuming. */
export const pauseCause = z.enum(['api', 'producer']);
/** Why a stream's first event is `resync`: reload state (GET /internal/v1/routers) instead of trusting yours. */
export const resyncReason = z.enum(['unknown_id', 'too_old']);

// mediasoup's IceState / DtlsState.
export const iceState = z.enum(['new', 'connected', 'completed', 'disconnected', 'closed']);
export const dtlsState = z.enum(['new', 'connecting', 'connected', 'failed', 'closed']);

const layer = z.int().min(0).nullable();
const producerScore = z.array(
  z.object({ encodingIdx: z.int().optional(), ssrc: z.int(), rid: z.string().optional(), score: z.number() }),
);
const consumerScore = z.object({ score: z.number(), producerScore: z.number(), producerScores: z.array(z.number()) });

/** In a cluster (CLUSTER_NODE_URL), the node whose resource the event is about; absent on a single relay. */
const clusterNodeId = z.string().optional().describe('the cluster node that published it (CLUSTER_NODE_ID); absent on a single relay');

function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S, description: string) {
  return z.object({ id: eventId, type: z.literal(type), time: eventTime, nodeId: clusterNodeId, ...shape }).describe(description);
}

const onRouter = { routerId: z.string(), appData };
const onTransport = { transportId: z.string(), ...onRouter };
const onProducer = { producerId: z.string(), ...onTransport };
const onConsumer = { consumerId: z.string(), producerId: z.string(), ...onTransport };

export const eventSchemas = {
  'worker.died': event(
    'worker.died',
    { workerPid: z.int(), routerIds: z.array(z.string()), restartInMs: z.int().min(0) },
    'A mediasoup worker died; routerIds are the routers it held (each also gets router.closed worker_died).',
  ),
  'worker.restarted': event('worker.restarted', { workerPid: z.int() }, 'A replacement worker is up (its new pid).'),
  'router.closed': event('router.closed', { ...onRouter, reason: routerCloseReason }, 'A router closed.'),
  'transport.closed': event('transport.closed', { ...onTransport, reason: transportCloseReason }, 'A transport closed.'),
  'transport.ice': event('transport.ice', { ...onTransport, state: iceState }, "A transport's ICE state changed (mediasoup icestatechange)."),
  'transport.dtls': event('transport.dtls', { ...onTransport, state: dtlsState }, "A transport's DTLS state changed (mediasoup dtlsstatechange), including failed."),
  'producer.closed': event('producer.closed', { ...onProducer, reason: producerCloseReason }, 'A producer closed.'),
  'producer.paused': event('producer.paused', onProducer, 'A producer was paused.'),
  'producer.resumed': event('producer.resumed', onProducer, 'A producer was resumed.'),
  'producer.score': event('producer.score', { ...onProducer, score: producerScore }, "A producer's scores changed: one entry per RTP stream, as mediasoup gives them."),
  'consumer.closed': event('consumer.closed', { ...onConsumer, reason: consumerCloseReason }, 'A consumer closed.'),
  'consumer.paused': event('consumer.paused', { ...onConsumer, by: pauseCause }, 'A consumer was paused, by the API or because its producer paused.'),
  'consumer.resumed': event('consumer.resumed', { ...onConsumer, by: pauseCause }, 'A consumer was resumed, by the API or because its producer resumed.'),
  'consumer.score': event('consumer.score', { ...onConsumer, score: consumerScore }, "A consumer's score changed."),
  'consumer.layers': event(
    'consumer.layers',
    { ...onConsumer, spatialLayer: layer, temporalLayer: layer },
    "A simulcast/SVC consumer's current layers changed; null when no layer is forwarded.",
  ),
  'dataProducer.closed': event(
    'dataProducer.closed',
    { dataProducerId: z.string(), ...onTransport, reason: dataProducerCloseReason },
    'A data producer closed.',
  ),
  'dataConsumer.closed': event(
    'dataConsumer.closed',
    { dataConsumerId: z.string(), dataProducerId: z.string(), ...onTransport, reason: dataConsumerCloseReason },
    'A data consumer closed.',
  ),
  'pipeTransport.closed': event(
    'pipeTransport.closed',
    { pipeTransportId: z.string(), ...onRouter, reason: transportCloseReason },
    'A pipe transport (to another relay) closed; its producers and consumers close with it (transport_closed).',
  ),
  'plainTransport.closed': event(
    'plainTransport.closed',
    { plainTransportId: z.string(), ...onRouter, reason: transportCloseReason },
    'A plain RTP transport closed; its producers and consumers close with it (transport_closed).',
  ),
  'whipEndpoint.closed': event(
    'whipEndpoint.closed',
    { endpointId: z.string(), ...onRouter, reason: transportCloseReason },
    'A WHIP endpoint closed (DELETE, or its router closed); its sessions ended before (whip.session.ended endpoint_closed).',
  ),
  'whepEndpoint.closed': event(
    'whepEndpoint.closed',
    { endpointId: z.string(), ...onRouter, reason: transportCloseReason },
    'A WHEP endpoint closed (DELETE, or its router closed); its sessions ended before (whep.session.ended endpoint_closed).',
  ),
  'whip.session.started': event(
    'whip.session.started',
    { endpointId: z.string(), sessionId: z.string(), ...onTransport, producerIds: z.array(z.string()) },
    "A WHIP client's offer was answered: its transport and the producers it sends on (appData is the endpoint's).",
  ),
  'whip.session.ended': event(
    'whip.session.ended',
    { endpointId: z.string(), sessionId: z.string(), ...onTransport, producerIds: z.array(z.string()), reason: sessionEndReason },
    'A WHIP session ended: DELETE on it (api), its endpoint closed, or its transport closed otherwise (router closed, worker died); its producers closed with it.',
  ),
  'whep.session.started': event(
    'whep.session.started',
    { endpointId: z.string(), sessionId: z.string(), ...onTransport, producerIds: z.array(z.string()) },
    "A WHEP client's offer was answered: its transport and the producers it plays so far (appData is the endpoint's).",
  ),
  'whep.session.ended': event(
    'whep.session.ended',
    { endpointId: z.string(), sessionId: z.string(), ...onTransport, producerIds: z.array(z.string()), reason: sessionEndReason },
    'A WHEP session ended: DELETE on it (api), its endpoint closed, or its transport closed otherwise; its consumers closed with it.',
  ),
  'router.activeSpeaker': event(
    'router.activeSpeaker',
    { routerId: z.string(), producerId: z.string(), appData },
    "The router's active speaker changed (appData is the producer's).",
  ),
  'router.audioLevels': event(
    'router.audioLevels',
    {
      routerId: z.string(),
      volumes: z.array(z.object({ producerId: z.string(), volume: z.number().describe('dBov, -127..0'), appData })),
    },
    'The loudest audio producers of the router over the last interval (appData per producer).',
  ),
  'router.silence': event('router.silence', { routerId: z.string() }, 'No audio producer of the router is above the threshold.'),
  'recording.started': event(
    'recording.started',
    { recordingId: z.string(), routerId: z.string(), producerIds: z.array(z.string()), appData: recordingAppData },
    'A recording began (ffmpeg is writing its file).',
  ),
  'recording.stopped': event(
    'recording.stopped',
    {
      recordingId: z.string(),
      routerId: z.string(),
      reason: z.enum(['api', 'producer_closed', 'router_closed', 'max_duration', 'shutdown']),
      file: z.string().describe("the file's name in RECORDINGS_DIR"),
      bytes: z.int().min(0),
      durationMs: z.int().min(0),
      appData: recordingAppData,
    },
    'A recording ended and its file is finalised.',
  ),
  'recording.uploaded': event(
    'recording.uploaded',
    { recordingId: z.string(), routerId: z.string(), key: z.string(), bytes: z.int().min(0), appData: recordingAppData },
    "A finished recording's file is in RECORDINGS_S3_BUCKET under key (its size checked); the local file is removed unless RECORDINGS_KEEP_LOCAL=1.",
  ),
  'recording.recovered': event(
    'recording.recovered',
    {
      recordingId: z.string(),
      routerId: z.string(),
      file: z.string().describe("the file's name in RECORDINGS_DIR"),
      bytes: z.int().min(0),
      appData: recordingAppData,
    },
    'At start: a recording that an earlier run of the relay left unfinished (killed or crashed while it recorded) is finalised and playable; its upload follows with RECORDINGS_S3_BUCKET.',
  ),
  'recording.failed': event(
    'recording.failed',
    { recordingId: z.string(), routerId: z.string(), error: z.string(), appData: recordingAppData },
    'A recording failed (ffmpeg died or could not start, disk full, port trouble; its upload, after the last retry; or, at start, a recording an earlier run left unfinished could not be made playable); the file is kept.',
  ),
  'relay.draining': event('relay.draining', {}, 'The relay is draining: it refuses new routers; move new rooms elsewhere.'),
  // Its nodeId is the node lost, not the node telling (the one every other event's nodeId names).
  'node.lost': z
    .object({
      id: eventId,
      type: z.literal('node.lost'),
      time: eventTime,
      nodeId: z.string().describe('the node lost (its record expired without a clean stop), not the one that tells'),
      routerIds: z.array(z.string()).describe('every room that had a part on it, whether it goes on on other nodes or not'),
      transportIds: z.array(z.string()),
      producerIds: z.array(z.string()),
      truncated: z.boolean().describe('true when the node held more ids than it could list (MAX_HELD_IDS per kind): reload the state'),
    })
    .describe('A cluster node stopped answering and its record expired (killed, cut off): its resources are gone. Published once, by one surviving node, within 10 s.'),
} as const;

/**
 * Telemetry, streamed and posted but never stored in the event log (issue 39): high-rate, and
 * superseded by the next one. Every other type is durable (docs/events.md).
 */
export const LIVE_ONLY_TYPES = ['producer.score', 'consumer.score', 'consumer.layers', 'router.activeSpeaker', 'router.audioLevels', 'router.silence'] as const satisfies readonly (keyof typeof eventSchemas)[];

/** Stream-only: the first event of a stream whose Last-Event-ID cannot be continued. */
export const resyncEvent = event(
  'resync',
  { reason: resyncReason },
  'Stream only, always first: events were missed (the id is older than the event log keeps, or not one the relay issued). Reload state, then follow the stream.',
);

type Schemas = typeof eventSchemas;
export type RelayEventType = keyof Schemas;
export const EVENT_TYPES = Object.keys(eventSchemas) as RelayEventType[];

const eventList = Object.values(eventSchemas) as [Schemas[RelayEventType], ...Schemas[RelayEventType][]];

/** Every event the bus publishes (stream and webhook). */
export const relayEventSchema = z.discriminatedUnion('type', eventList).describe('An event of the media relay');
/** What an event stream carries: every event, plus `resync`. */
export const relayStreamEventSchema = z.discriminatedUnion('type', [...eventList, resyncEvent]).describe('An event of the relay event stream');

export type RelayEvent = z.infer<typeof relayEventSchema>;
export type ResyncEvent = z.infer<typeof resyncEvent>;
export type RelayStreamEvent = RelayEvent | ResyncEvent;
export type RelayEventOf<T extends RelayEventType> = Extract<RelayEvent, { type: T }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** What a publisher hands to the bus: the event without `id` and `time`, which the bus assigns. */
export type RelayEventInput = DistributiveOmit<RelayEvent, 'id' | 'time'>;

/** The routers an event concerns: one id (most events), several (worker.died), or none (relay-wide events). */
export type EventRouters = string | readonly string[] | undefined;

/** The routers an event concerns, without an array for the one-router case (the bus asks for every event). */
export function routersOf(event: RelayStreamEvent): EventRouters {
  if ('routerId' in event) return event.routerId;
  if ('routerIds' in event) return event.routerIds;
  return undefined;
}

/** A webhook POST body. `dropped` > 0: that many events were lost (queue overflow) just before this batch. */
export const webhookBatchSchema = z
  .object({
    timestamp: z.int().describe('Unix seconds when this delivery attempt was signed; refuse it when far from now'),
    dropped: z.int().min(0).describe('events dropped (queue overflow) between the previous batch and this one; > 0 means reload state'),
    events: z.array(relayEventSchema),
  })
  .describe('A webhook delivery: a batch of events in order, signed as a whole');
export type WebhookBatch = z.infer<typeof webhookBatchSchema>;
