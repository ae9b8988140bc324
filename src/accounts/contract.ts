// The account API's contract, every family: what a client (or a test) may type its calls by.
export * from './account/contract.js';
export * from './devices/contract.js';
export * from './password/contract.js';
export * from './profile/contract.js';
export * from './sessions/contract.js';
export * from './ice-servers/contract.js';
export * from './email/contract.js';
export * from './totp/contract.js';
export * from './passkeys/contract.js';
export * from './reauth/contract.js';
