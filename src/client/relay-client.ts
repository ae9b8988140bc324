// Typed client of the internal media relay API for a signaling server written in TypeScript
// (package subpath `chat-backend/relay-client`, src/client/index.ts). Calls go through Hono's RPC
// client over the API type of the relay's contract (src/relay/contract/api.ts), which checks every
// path and body here; what the client promises is RelayClient, in the wire types generated from the
// contracts (wire.gen.ts), so the package's declarations need no server code, no hono and no zod.
import { hc, type ClientResponse } from 'hono/client';
import type { RelayApi } from '../relay/contract/api.js';
import { accountsClient } from './accounts.js';
import { toError } from './errors.js';
import { eventsClient, type EventsIterator, type EventsOptions } from './events.js';
import type * as Wire from './types.js';
import type { PipeRelay, RelayClientOptions } from './types.js';

// What this module always exported, for the repository's own tests and demo that import this path
// (the package's entry is index.ts).
export { RelayClientError } from './errors.js';
export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions } from './events.js';
export type * from './types.js';
/** The success body of a typed call, or a RelayClientError for anything else. */
async function json<T>(call: Promise<ClientResponse<T, number, 'json'>>): Promise<T> {
  const res = await call;
  if (!res.ok) throw await toError(res);
  return (await res.json());
}

async function empty(call: Promise<ClientResponse<unknown, number, string>>): Promise<void> {
  const res = await call;
  if (!res.ok) throw await toError(res);
}

/**
 * @example
 * const relay = createRelayClient({ baseUrl: 'http://relay.internal:3001', token: process.env.INTERNAL_TOKEN! })
 * const router = await relay.createRouter()
 * const transport = await relay.createTransport({ routerId: router.id, direction: 'send' })
 * try { await relay.resumeConsumer(id) } catch (e) { if (e instanceof RelayClientError && e.code === 'NOT_FOUND') … }
 */
export function createRelayClient(options: RelayClientOptions): RelayClient {
  const base = `${options.baseUrl.replace(/\/+$/, '')}/internal`;
  const rpc = hc<RelayApi>(base, {
    headers: { 'X-Internal-Token': options.token },
    ...(options.fetch ? { fetch: options.fetch as typeof fetch } : {}),
  });
  const { routers, transports, producers, consumers } = rpc.v1;
  const dataProducers = rpc.v1['data-producers'];
  const dataConsumers = rpc.v1['data-consumers'];
  const pipeTransports = rpc.v1['pipe-transports'];
  const iceServers = rpc.v1['ice-servers'];
  const plainTransports = rpc.v1['plain-transports'];
  const { recordings } = rpc.v1;

  return {
    info: () => json(rpc.info.$get()),
    /** Stops new routers here (DRAINING) while the open rooms go on; does not stop the process. */
    drain: () => json(rpc.v1.drain.$post()),
    createRouter: (body = {}) => json(routers.$post({ json: body })),
    /** Every open router `{id, appData, createdAt, workerPid, counts}`, oldest first. */
    listRouters: () => json(routers.$get()),
    /** One router with its transports, producers and consumers. */
    getRouter: (id) => json(routers[':id'].$get({ param: { id } })),
    closeRouter: (id) => empty(routers[':id'].$delete({ param: { id } })),
    createTransport: (body) => json(transports.$post({ json: body })),
    connectTransport: (id, dtlsParameters) =>
      json(transports[':id'].connect.$post({ param: { id }, json: { dtlsParameters } })),
    closeTransport: (id) => empty(transports[':id'].$delete({ param: { id } })),
    createProducer: (body) => json(producers.$post({ json: body })),
    closeProducer: (id) => empty(producers[':id'].$delete({ param: { id } })),
    createConsumer: (body) => json(consumers.$post({ json: body })),
    resumeConsumer: (id) => json(consumers[':id'].resume.$post({ param: { id } })),
    closeConsumer: (id) => empty(consumers[':id'].$delete({ param: { id } })),
    pauseProducer: (id) => json(producers[':id'].pause.$post({ param: { id } })),
    resumeProducer: (id) => json(producers[':id'].resume.$post({ param: { id } })),
    producerStats: (id) => json(producers[':id'].stats.$get({ param: { id } })),
    pauseConsumer: (id) => json(consumers[':id'].pause.$post({ param: { id } })),
    setConsumerPreferredLayers: (id, layers) =>
      json(consumers[':id']['preferred-layers'].$post({ param: { id }, json: layers })),
    setConsumerPriority: (id, priority) => json(consumers[':id'].priority.$post({ param: { id }, json: { priority } })),
    requestKeyFrame: (id) => empty(consumers[':id']['key-frame'].$post({ param: { id } })),
    consumerStats: (id) => json(consumers[':id'].stats.$get({ param: { id } })),
    restartIce: (id) => json(transports[':id']['restart-ice'].$post({ param: { id } })),
    setMaxIncomingBitrate: (id, bitrate) => empty(transports[':id']['max-incoming-bitrate'].$post({ param: { id }, json: { bitrate } })),
    transportStats: (id) => json(transports[':id'].stats.$get({ param: { id } })),
    createDataProducer: (body) => json(dataProducers.$post({ json: body })),
    closeDataProducer: (id) => empty(dataProducers[':id'].$delete({ param: { id } })),
    createDataConsumer: (body) => json(dataConsumers.$post({ json: body })),
    closeDataConsumer: (id) => empty(dataConsumers[':id'].$delete({ param: { id } })),
    /** Cascading (src/client/pipes.ts does the whole sequence): a pipe transport on a router, SRTP unless `enableSrtp: false`. */
    createPipeTransport: (body) => json(pipeTransports.$post({ json: body })),
    connectPipeTransport: (id, body) =>
      json(pipeTransports[':id'].connect.$post({ param: { id }, json: body })),
    createPipeConsumer: (id, producerId) => json(pipeTransports[':id'].consumers.$post({ param: { id }, json: { producerId } })),
    createPipeProducer: (id, body) =>
      json(pipeTransports[':id'].producers.$post({ param: { id }, json: body })),
    closePipeTransport: (id) => empty(pipeTransports[':id'].$delete({ param: { id } })),
    createPlainTransport: (body) => json(plainTransports.$post({ json: body })),
    connectPlainTransport: (id, body) => json(plainTransports[':id'].connect.$post({ param: { id }, json: body })),
    closePlainTransport: (id) => empty(plainTransports[':id'].$delete({ param: { id } })),
    createRecording: (body) => json(recordings.$post({ json: body })),
    listRecordings: (query = {}) => json(recordings.$get({ query })),
    getRecording: (id) => json(recordings[':id'].$get({ param: { id } })),
    stopRecording: (id) => json(recordings[':id'].$delete({ param: { id } })),
    iceServers: (body = {}) => json(iceServers.$post({ json: body })),
    /** `events({ routerIds?, lastEventId?, signal? })`: the event stream, resuming on its own (src/client/events.ts). */
    ...eventsClient(options),
    /** introspect, ban, unban, user, users: the account area's internal operations (src/client/accounts.ts). */
    ...accountsClient(options),
  };
}


/**
 * The relay's operations, in the generated wire types (wire.gen.ts). Each one answers the success body, or throws
 * a RelayClientError (`code`, `message`, `details`) for an error body of the relay or anything else.
 * A relay client is also what piping needs of each relay (createPipes).
 */
export interface RelayClient extends PipeRelay {
  info(): Promise<Wire.RelayInfo>;
  /** Stops new routers here (DRAINING) while the open rooms go on; does not stop the process. */
  drain(): Promise<Wire.DrainState>;
  createRouter(body?: Wire.CreateRouterBody): Promise<Wire.Router>;
  /** Every open router `{id, appData, createdAt, workerPid, counts}`, oldest first. */
  listRouters(): Promise<Wire.RouterList>;
  /** One router with its transports, producers and consumers. */
  getRouter(id: string): Promise<Wire.RouterState>;
  closeRouter(id: string): Promise<void>;
  createTransport(body: Wire.CreateTransportBody): Promise<Wire.Transport>;
  connectTransport(id: string, dtlsParameters: Wire.DtlsParameters): Promise<Wire.Connected>;
  closeTransport(id: string): Promise<void>;
  restartIce(id: string): Promise<Wire.IceRestart>;
  /** bps, 10 000-100 000 000. */
  setMaxIncomingBitrate(id: string, bitrate: number): Promise<void>;
  transportStats(id: string): Promise<Wire.Stats>;
  createProducer(body: Wire.CreateProducerBody): Promise<Wire.Producer>;
  producerStats(id: string): Promise<Wire.Stats>;
  /** Always created paused: resume it once the client's receive transport is connected. */
  createConsumer(body: Wire.CreateConsumerBody): Promise<Wire.Consumer>;
  resumeConsumer(id: string): Promise<Wire.ConsumerState>;
  pauseConsumer(id: string): Promise<Wire.ConsumerState>;
  /** Simulcast or SVC consumers only (CONFLICT otherwise). */
  setConsumerPreferredLayers(id: string, layers: Wire.PreferredLayersBody): Promise<Wire.ConsumerLayers>;
  /** 1-255. */
  setConsumerPriority(id: string, priority: number): Promise<Wire.ConsumerPriority>;
  requestKeyFrame(id: string): Promise<void>;
  consumerStats(id: string): Promise<Wire.Stats>;
  createDataProducer(body: Wire.CreateDataProducerBody): Promise<Wire.DataProducer>;
  closeDataProducer(id: string): Promise<void>;
  createDataConsumer(body: Wire.CreateDataConsumerBody): Promise<Wire.DataConsumer>;
  closeDataConsumer(id: string): Promise<void>;
  /** Plain RTP (ffmpeg, GStreamer, OBS): produce or consume on it with createProducer/createConsumer, its id as transportId. */
  createPlainTransport(body: Wire.CreatePlainTransportBody): Promise<Wire.PlainTransport>;
  connectPlainTransport(id: string, body: Wire.ConnectPlainTransportBody): Promise<Wire.Connected>;
  closePlainTransport(id: string): Promise<void>;
  /** Records producers of a router (one audio and/or one video) into RECORDINGS_DIR; events recording.started/stopped/failed. */
  createRecording(body: Wire.CreateRecordingBody): Promise<Wire.Recording>;
  listRecordings(query?: { routerId?: string | undefined }): Promise<Wire.RecordingList>;
  getRecording(id: string): Promise<Wire.Recording>;
  /** Stops a recording; resolves once its file is finalised. */
  stopRecording(id: string): Promise<Wire.Recording>;
  /** Whether an access token is active now, and whose (RFC 7662); `{active: false}` for any other token. */
  introspect(token: string): Promise<Wire.Introspection>;
  /** Bans a user (every session ends at once); RelayClientError NOT_FOUND for an unknown id. */
  ban(userId: number, body?: Wire.BanBody): Promise<Wire.OperatorUser>;
  unban(userId: number): Promise<Wire.OperatorUser>;
  /** One user for operators: fields, the ban in force, live sessions. */
  user(userId: number): Promise<Wire.OperatorUserDetail>;
  /** A page of users; `query`: username or e-mail prefix; follow `next_cursor`. */
  users(query?: { query?: string; cursor?: string; limit?: number }): Promise<Wire.UsersPage>;
  /** TURN servers with a short-lived credential for `userId` (`{iceServers: [], expiresIn: 0}` when the relay has no TURN). */
  iceServers(body?: Wire.IceServersBody): Promise<Wire.IceServers>;
  /** The event stream, resuming on its own with Last-Event-ID (src/client/events.ts). */
  events(options?: EventsOptions): EventsIterator;
}
