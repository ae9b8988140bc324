// The typed relay client, as the package exports it (`chat-backend/relay-client`,
// packages/relay-client). Nothing under src/ imports it; its types are the wire types generated from
// the contracts (wire.gen.ts, which imports nothing), so its declarations carry no server code.
export { createRelayClient, type RelayClient } from './relay-client.js';
export { RelayClientError } from './errors.js';
export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions, type WebhookVerificationFailure } from './events.js';
export type * from './types.js';
