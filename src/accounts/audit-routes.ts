// Kept only for src/docs/openapi.ts (the hand-kept documents, deleted once the relay generates its
// own as well): the audit trail's query now lives in the contract (contract/audit.ts).
export { AUTH_EVENTS_MAX_LIMIT, authEventsQuery } from './contract/audit.js';
