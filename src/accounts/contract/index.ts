// The account API's contract, every family: what a client (or a test) may type its calls by.
export * from './account.js';
export * from './devices.js';
export * from './password.js';
export * from './profile.js';
export * from './session.js';
export * from './ice-servers.js';
export * from './email.js';
export * from './totp.js';
export * from './passkeys.js';
export * from './reauth.js';
