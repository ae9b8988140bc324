// The typed client's own vocabulary: the wire types (request bodies as sent, answers and events as
// received), generated from the contracts into wire.gen.ts (`npm run client:types`), and the client's
// options and the shape piping asks of a relay, written here. The package's declarations
// (dist/index.d.ts) need neither zod nor hono nor any server code: wire.gen.ts imports nothing.
import type { ConnectPipeTransportBody, Connected, CreatePipeProducerBody, CreatePipeTransportBody, PausedState, PipeConsumer, PipeProducer, PipeTransport } from './wire.gen.js';

export type * from './wire.gen.js';

export interface RelayClientOptions {
  /** Origin of the relay service, e.g. `http://relay.internal:3001` (the `/internal` prefix is added here). */
  baseUrl: string;
  /** The relay's INTERNAL_TOKEN, sent as X-Internal-Token on every request. */
  token: string;
  /** A fetch to use instead of the global one, e.g. `app.request` in tests. */
  fetch?: typeof fetch | ((input: string | URL | Request, init?: RequestInit) => Response | Promise<Response>);
}

/** What piping a producer between two relays asks of each relay's client (createRelayClient gives all of it). */
export interface PipeRelay {
  createPipeTransport(body: CreatePipeTransportBody): Promise<PipeTransport>;
  connectPipeTransport(id: string, body: ConnectPipeTransportBody): Promise<Connected>;
  createPipeConsumer(id: string, producerId: string): Promise<PipeConsumer>;
  createPipeProducer(id: string, body: CreatePipeProducerBody): Promise<PipeProducer>;
  closePipeTransport(id: string): Promise<void>;
  closeConsumer(id: string): Promise<void>;
  closeProducer(id: string): Promise<void>;
  pauseProducer(id: string): Promise<PausedState>;
  resumeProducer(id: string): Promise<PausedState>;
}

