// Typed client of the internal media relay API for a signaling server written in TypeScript
// (package subpath `chat-backend/relay-client`, src/client/index.ts), built on Hono's RPC client over
// the API type of the relay's contract (src/relay/contract/api.ts): no server code in its types.
import { hc, type ClientResponse } from 'hono/client';
import { accountsClient } from './accounts.js';
import { toError } from './errors.js';
import { eventsClient } from './events.js';
import type { PipeRelay, RelayApi, RelayClientOptions } from './types.js';

// What this module always exported, for the repository's own tests and demo that import this path
// (the package's entry is index.ts).
export { RelayClientError } from './errors.js';
export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export type { BanBody, Introspection, OperatorUser, OperatorUserDetail, UsersPage } from './accounts.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions } from './events.js';
export type { PipeRelay, RelayApi, RelayClientOptions, RelayErrorCode, RelayEvent, RelayEventType, RelayStreamEvent, WebhookBatch } from './types.js';

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
export function createRelayClient(options: RelayClientOptions) {
  const base = `${options.baseUrl.replace(/\/+$/, '')}/internal`;
  const rpc = hc<RelayApi>(base, {
    headers: { 'X-Internal-Token': options.token },
    ...(options.fetch ? { fetch: options.fetch as typeof fetch } : {}),
  });
  const { routers, transports, producers, consumers } = rpc.v1;
  const dataProducers = rpc.v1['data-producers'];
  const dataConsumers = rpc.v1['data-consumers'];
  const pipeTransports = rpc.v1['pipe-transports'];

  return {
    /** The underlying Hono RPC client, for anything not wrapped below. */
    rpc,
    info: () => json(rpc.info.$get()),
    /** Stops new routers here (DRAINING) while the open rooms go on; does not stop the process. */
    drain: () => json(rpc.v1.drain.$post()),
    createRouter: (body: Parameters<typeof routers.$post>[0]['json'] = {}) => json(routers.$post({ json: body })),
    /** Every open router `{id, appData, createdAt, workerPid, counts}`, oldest first. */
    listRouters: () => json(routers.$get()),
    /** One router with its transports, producers and consumers. */
    getRouter: (id: string) => json(routers[':id'].$get({ param: { id } })),
    closeRouter: (id: string) => empty(routers[':id'].$delete({ param: { id } })),
    createTransport: (body: Parameters<typeof transports.$post>[0]['json']) => json(transports.$post({ json: body })),
    connectTransport: (id: string, dtlsParameters: Parameters<(typeof transports)[':id']['connect']['$post']>[0]['json']['dtlsParameters']) =>
      json(transports[':id'].connect.$post({ param: { id }, json: { dtlsParameters } })),
    closeTransport: (id: string) => empty(transports[':id'].$delete({ param: { id } })),
    createProducer: (body: Parameters<typeof producers.$post>[0]['json']) => json(producers.$post({ json: body })),
    closeProducer: (id: string) => empty(producers[':id'].$delete({ param: { id } })),
    createConsumer: (body: Parameters<typeof consumers.$post>[0]['json']) => json(consumers.$post({ json: body })),
    resumeConsumer: (id: string) => json(consumers[':id'].resume.$post({ param: { id } })),
    closeConsumer: (id: string) => empty(consumers[':id'].$delete({ param: { id } })),
    pauseProducer: (id: string) => json(producers[':id'].pause.$post({ param: { id } })),
    resumeProducer: (id: string) => json(producers[':id'].resume.$post({ param: { id } })),
    producerStats: (id: string) => json(producers[':id'].stats.$get({ param: { id } })),
    pauseConsumer: (id: string) => json(consumers[':id'].pause.$post({ param: { id } })),
    setConsumerPreferredLayers: (id: string, layers: Parameters<(typeof consumers)[':id']['preferred-layers']['$post']>[0]['json']) =>
      json(consumers[':id']['preferred-layers'].$post({ param: { id }, json: layers })),
    setConsumerPriority: (id: string, priority: number) => json(consumers[':id'].priority.$post({ param: { id }, json: { priority } })),
    requestKeyFrame: (id: string) => empty(consumers[':id']['key-frame'].$post({ param: { id } })),
    consumerStats: (id: string) => json(consumers[':id'].stats.$get({ param: { id } })),
    restartIce: (id: string) => json(transports[':id']['restart-ice'].$post({ param: { id } })),
    setMaxIncomingBitrate: (id: string, bitrate: number) => empty(transports[':id']['max-incoming-bitrate'].$post({ param: { id }, json: { bitrate } })),
    transportStats: (id: string) => json(transports[':id'].stats.$get({ param: { id } })),
    createDataProducer: (body: Parameters<typeof dataProducers.$post>[0]['json']) => json(dataProducers.$post({ json: body })),
    closeDataProducer: (id: string) => empty(dataProducers[':id'].$delete({ param: { id } })),
    createDataConsumer: (body: Parameters<typeof dataConsumers.$post>[0]['json']) => json(dataConsumers.$post({ json: body })),
    closeDataConsumer: (id: string) => empty(dataConsumers[':id'].$delete({ param: { id } })),
    /** Cascading (src/client/pipes.ts does the whole sequence): a pipe transport on a router, SRTP unless `enableSrtp: false`. */
    createPipeTransport: (body: Parameters<typeof pipeTransports.$post>[0]['json']) => json(pipeTransports.$post({ json: body })),
    connectPipeTransport: (id: string, body: Parameters<(typeof pipeTransports)[':id']['connect']['$post']>[0]['json']) =>
      json(pipeTransports[':id'].connect.$post({ param: { id }, json: body })),
    createPipeConsumer: (id: string, producerId: string) => json(pipeTransports[':id'].consumers.$post({ param: { id }, json: { producerId } })),
    createPipeProducer: (id: string, body: Parameters<(typeof pipeTransports)[':id']['producers']['$post']>[0]['json']) =>
      json(pipeTransports[':id'].producers.$post({ param: { id }, json: body })),
    closePipeTransport: (id: string) => empty(pipeTransports[':id'].$delete({ param: { id } })),
    /** `events({ routerIds?, lastEventId?, signal? })`: the event stream, resuming on its own (src/client/events.ts). */
    ...eventsClient(options),
    /** introspect, ban, unban, user, users: the account area's internal operations (src/client/accounts.ts). */
    ...accountsClient(options),
  };
}

/** A relay client is also what piping needs of each relay (createPipes): checked here. */
type PipeEnded<T extends PipeRelay> = T;
export type RelayClient = PipeEnded<ReturnType<typeof createRelayClient>>;
