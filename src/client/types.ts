// The typed client's own vocabulary, a leaf: its options, and the part of a relay client that
// cascading (pipes.ts) needs, typed by the relay's contract alone (no server code).
import type { z } from 'zod';
import type { createPipeTransportBody, connectPipeTransportBody, createPipeProducerBody, pipeConsumerSchema, pipeProducerSchema, pipeTransportSchema } from '../relay/contract/pipes.js';
import type { consumerStateSchema } from '../relay/contract/consumers.js';

export type { RelayApi } from '../relay/contract/api.js';
export type { RelayErrorCode } from '../relay/contract/errors.js';
export type { RelayEvent, RelayEventType, RelayStreamEvent, WebhookBatch } from '../relay/contract/events.js';

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
  createPipeTransport(body: z.input<typeof createPipeTransportBody>): Promise<z.output<typeof pipeTransportSchema>>;
  connectPipeTransport(id: string, body: z.input<typeof connectPipeTransportBody>): Promise<{ id: string; connected: true }>;
  createPipeConsumer(id: string, producerId: string): Promise<z.output<typeof pipeConsumerSchema>>;
  createPipeProducer(id: string, body: z.input<typeof createPipeProducerBody>): Promise<z.output<typeof pipeProducerSchema>>;
  closePipeTransport(id: string): Promise<void>;
  closeConsumer(id: string): Promise<void>;
  closeProducer(id: string): Promise<void>;
  pauseProducer(id: string): Promise<{ id: string; paused: boolean }>;
  resumeProducer(id: string): Promise<{ id: string; paused: boolean }>;
}

export type ConsumerState = z.output<typeof consumerStateSchema>;
