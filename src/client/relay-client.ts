// Typed client of the internal media relay API for a signaling server written in TypeScript
// (package subpath `chat-backend/relay-client`, src/client/index.ts). Calls go through Hono's RPC
// client over the API type of the relay's contract (src/relay/contract/api.ts), which checks every
// path and body here; what the client promises is RelayClient, in the wire types generated from the
// contracts (wire.gen.ts), so the package's declarations need no server code, no hono and no zod.
import { hc, type ClientResponse } from 'hono/client';
import type { RelayApi } from '../relay/contract/api.js';
import { consumersClient, type ConsumersClient } from '../relay/kinds/consumers/client.js';
import { controlsClient, type ControlsClient } from '../relay/kinds/controls/client.js';
import { dataClient, type DataClient } from '../relay/kinds/data/client.js';
import { pipesClient, type PipesClient } from '../relay/kinds/pipes/client.js';
import { plainClient, type PlainClient } from '../relay/kinds/plain/client.js';
import { whipClient, type WhipClient } from '../relay/kinds/whip/client.js';
import { producersClient, type ProducersClient } from '../relay/kinds/producers/client.js';
import { routersClient, type RoutersClient } from '../relay/kinds/routers/client.js';
import { transportsClient, type TransportsClient } from '../relay/kinds/transports/client.js';
import { accountsClient } from './accounts.js';
import { toError } from './errors.js';
import { eventsClient, type EventsIterator, type EventsOptions } from './events.js';
import { makeKit, type ClientKit } from './kit.js';
import type * as Wire from './types.js';
import type { PipeRelay, RelayClientOptions } from './types.js';

// What this module always exported, for the repository's own tests and demo that import this path
// (the package's entry is index.ts).
export { RelayClientError } from './errors.js';
export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions } from './events.js';
export type * from './types.js';
/**
 * Every relay kind's client methods (src/relay/kinds/<kind>/client.ts): the interfaces, then the
 * factories in the same order (the compiler checks that the two agree). The declarations name only
 * the interfaces: the factories' kit holds the relay's API type, which the package must not carry.
 */
type KindClients = [RoutersClient, TransportsClient, ProducersClient, ConsumersClient, ControlsClient, DataClient, PipesClient, PlainClient, WhipClient];
type Factories<T extends unknown[]> = { [K in keyof T]: (kit: ClientKit) => T[K] };
const KIND_CLIENTS: Factories<KindClients> = [
  routersClient,
  transportsClient,
  producersClient,
  consumersClient,
  controlsClient,
  dataClient,
  pipesClient,
  plainClient,
  whipClient,
];

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** The methods of every kind, as one object type. */
type KindMethods = UnionToIntersection<KindClients[number]>;

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
  const kit = makeKit<RelayApi>({ rpc, json, empty });
  const kinds = Object.assign({}, ...KIND_CLIENTS.map((make) => make(kit))) as KindMethods;
  const { recordings } = rpc.v1;
  const iceServers = rpc.v1['ice-servers'];

  return {
    ...kinds,
    info: () => json(rpc.info.$get()),
    /** Stops new routers here (DRAINING) while the open rooms go on; does not stop the process. */
    drain: () => json(rpc.v1.drain.$post()),
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
 * A relay client is also what piping needs of each relay (createPipes). Each kind's methods are in
 * its folder (src/relay/kinds/<kind>/client.ts); the service's, the recordings' and the accounts' here.
 */
export interface RelayClient extends PipeRelay, KindMethods {
  info(): Promise<Wire.RelayInfo>;
  /** Stops new routers here (DRAINING) while the open rooms go on; does not stop the process. */
  drain(): Promise<Wire.DrainState>;
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
