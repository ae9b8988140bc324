// The typed relay client, as the package exports it (`chat-backend/relay-client`). Nothing under src/
// imports it; its types come from the relay's contract alone.
export { createRelayClient, type RelayClient } from './relay-client.js';
export { RelayClientError } from './errors.js';
export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions } from './events.js';
export type { PipeRelay, RelayApi, RelayClientOptions, RelayErrorCode, RelayEvent, RelayEventType, RelayStreamEvent, WebhookBatch } from './types.js';
