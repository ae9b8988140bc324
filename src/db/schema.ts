// The database schema, assembled from the tables each account feature declares beside its code, and the event log (src/events/log).
export * from '../accounts/shared/schema.js';
export * from '../accounts/sessions/schema.js';
export * from '../accounts/reset/schema.js';
export * from '../accounts/audit/schema.js';
export * from '../accounts/email/schema.js';
export * from '../accounts/totp/schema.js';
export * from '../accounts/passkeys/schema.js';
export * from '../accounts/oidc/schema.js';
export * from '../events/log/schema.js';
