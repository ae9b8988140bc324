// The typed relay client, as the package exports it (`chat-backend/relay-client`). Nothing under src/
// imports it; its types come from the areas' contracts alone (the relay's, and the account area's for
// introspection, moderation and the auth.* events).
export { createRelayClient, type RelayClient } from './relay-client.js';
export { RelayClientError } from './errors.js';
export { createPipes, type PipeEnd, type PipedProducer, type Pipes } from './pipes.js';
export { verifyWebhook, WebhookVerificationError, type EventsIterator, type EventsOptions } from './events.js';
export type { PipeRelay, RelayApi, RelayClientOptions, RelayErrorCode, RelayEvent, RelayEventType, RelayStreamEvent, WebhookBatch } from './types.js';
export type { BanBody, Introspection, OperatorUser, OperatorUserDetail, UsersPage } from './accounts.js';
export type { AccountEvent, AccountEventType } from '../accounts/contract/events.js';
