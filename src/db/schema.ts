// The database schema, assembled from the tables each account feature declares beside its code.
export * from '../accounts/shared/schema.js';
export * from '../accounts/sessions/schema.js';
export * from '../accounts/reset/schema.js';
export * from '../accounts/audit/schema.js';
export * from '../accounts/email/schema.js';
export * from '../accounts/totp/schema.js';
export * from '../accounts/passkeys/schema.js';
