// Typed client of the internal media relay API for a signaling server written in TypeScript
// (package subpath `chat-backend/relay-client`), built on Hono's RPC client.
import { hc, type ClientResponse } from 'hono/client';
import { RELAY_ERROR_CODES, type RelayErrorCode } from '../relay/errors.js';
import type { InternalApp } from '../relay/http/app.js';
import { eventsClient } from './events.js';

export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions, type RelayEvent, type RelayEventType, type RelayStreamEvent, type WebhookBatch } from './events.js';

export interface RelayClientOptions {
  /** Origin of the relay service, e.g. `http://relay.internal:3001` (the `/internal` prefix is added here). */
  baseUrl: string;
  /** The relay's INTERNAL_TOKEN, sent as X-Internal-Token on every request. */
  token: string;
  /** A fetch to use instead of the global one, e.g. `app.request` in tests. */
  fetch?: typeof fetch | ((input: string | URL | Request, init?: RequestInit) => Response | Promise<Response>);
}

/**
 * An error body of the relay (`{code, message, details?}`) or, when the answer was not one, a
 * transport-level failure (`code` INTERNAL_ERROR, `details.body` holding what came back).
 */
export class RelayClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: RelayErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RelayClientError';
  }
}

const CODES: ReadonlySet<string> = new Set<RelayErrorCode>(RELAY_ERROR_CODES);

async function toError(res: Response | ClientResponse<unknown>): Promise<RelayClientError> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && 'code' in body && typeof body.code === 'string' && CODES.has(body.code)) {
    const { code, message, details } = body as { code: RelayErrorCode; message?: unknown; details?: unknown };
    return new RelayClientError(
      res.status,
      code,
      typeof message === 'string' ? message : code,
      details && typeof details === 'object' ? (details as Record<string, unknown>) : undefined,
    );
  }
  return new RelayClientError(res.status, 'INTERNAL_ERROR', `relay answered HTTP ${res.status} without an error object`, { body: text.slice(0, 500) });
}

/** The success body of a typed call, or a RelayClientError for anything else. */
async function json<T>(call: Promise<ClientResponse<T, number, 'json'>>): Promise<T> {
  const res = await call;
  if (!res.ok) throw await toError(res);
  return (await res.json()) as T;
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
  const rpc = hc<InternalApp>(base, {
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
  };
}

export type RelayClient = ReturnType<typeof createRelayClient>;
