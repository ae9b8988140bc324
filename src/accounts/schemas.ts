// Kept only for src/docs/openapi.ts (the hand-kept documents, deleted once the relay generates its
// own as well): the request bodies now live in the contract, one file per family.
export { changePasswordBody, forgotPasswordBody, resetPasswordBody } from './contract/password.js';
export { deleteAccountBody } from './contract/account.js';
export { updateProfileBody } from './contract/profile.js';
export { loginBody, logoutBody, refreshBody, registerBody } from './contract/session.js';
