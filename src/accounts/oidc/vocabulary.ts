// Sign-in with OpenID Connect providers: what the feature adds to the account area's vocabulary
// (src/accounts/vocabulary.ts) — its envelope codes, its rows of the error table, its audit event
// types, its way of opening a session. A leaf.
import { z } from 'zod';
import { SharedCode, type AccountErrorRow } from '../shared/vocabulary.js';

export const codes = {
  /** The provider's answer or ID token did not verify (which check: audited as oidc_login_failed, never answered). */
  OIDC_REFUSED: 2019,
  /** The provider's verified e-mail belongs to an account the identity is not linked to: sign in to it and link. */
  OIDC_LINK_REQUIRED: 2020,
  /** The provider cannot be used now (its discovery failed); retry later. */
  OIDC_UNAVAILABLE: 2021,
  /** The identity is linked to another account, or the account holds one of this provider already. */
  OIDC_IDENTITY_TAKEN: 2022,
  /** Removing this identity would leave no way to sign in. */
  OIDC_LAST_METHOD: 2023,
} as const;
const ApiCode = { ...SharedCode, ...codes };

export const errors = {
  no_such_provider: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such sign-in provider', meaning: 'the provider is not one of OIDC_PROVIDERS' },
  oidc_unavailable: {
    code: ApiCode.OIDC_UNAVAILABLE,
    status: 503,
    message: 'the sign-in provider cannot be reached now; retry later',
    meaning: "the provider's discovery document or keys could not be fetched (a bad or unreachable OIDC_<NAME>_ISSUER); the rest of the service runs, and the provider answers once discovery succeeds",
  },
  oidc_refused: {
    code: ApiCode.OIDC_REFUSED,
    status: 401,
    message: "the provider's answer could not be verified; start the sign-in again",
    meaning:
      "the ID token or the provider's answer did not verify: signature (an algorithm not allowed, a key not in the provider's JWKS), iss, aud, exp, iat, nonce; or the web flow's state (unknown, used, expired, from another browser), its iss parameter (RFC 9207) or the code exchange",
  },
  oidc_token_replayed: {
    code: ApiCode.OIDC_REFUSED,
    status: 401,
    message: 'this ID token (or its nonce) was used already; sign in with the provider again',
    meaning: "an ID token with this nonce was accepted before (the native flow takes each nonce once, until the token expires): get a new ID token from the provider's SDK, with a new nonce",
  },
  oidc_redirect_uri: {
    code: ApiCode.INVALID_REQUEST,
    status: 400,
    message: 'redirect_uri: not one of the allowed return addresses',
    meaning: 'redirect_uri is not exactly one of OIDC_REDIRECT_URIS',
  },
  oidc_code_refused: {
    code: ApiCode.OIDC_REFUSED,
    status: 401,
    message: 'the sign-in code is invalid, used or expired; sign in again',
    meaning: 'the one-time code of the web flow is unknown, used or older than 60 s',
  },
  oidc_link_required: {
    code: ApiCode.OIDC_LINK_REQUIRED,
    status: 409,
    message: 'an account with this e-mail address exists: sign in to it and link this provider there',
    meaning: "the provider's verified e-mail address belongs to an account this identity is not linked to; nothing was created or merged: sign in to that account (any way it has) and link the provider (POST /oidc/{provider}/link/…)",
  },
  oidc_email_unusable: {
    code: ApiCode.OIDC_LINK_REQUIRED,
    status: 409,
    message: 'the provider gave no usable e-mail address for a new account; sign up first and link this provider',
    meaning: 'a new account needs an e-mail address the provider asserts and no account holds (an unverified address an account holds never matches nor merges); sign up or sign in otherwise, then link the provider',
  },
  oidc_identity_taken: {
    code: ApiCode.OIDC_IDENTITY_TAKEN,
    status: 409,
    message: 'this identity is linked to another account',
    meaning: "the provider's identity is linked to another account (unlink it there first), or this account has an identity of this provider already",
  },
  oidc_last_method: {
    code: ApiCode.OIDC_LAST_METHOD,
    status: 409,
    message: 'this is the last way to sign in to the account; set a password or add another way to sign in first',
    meaning: 'the account has no password, no other identity and no other way to sign in: removing this one would lock it',
  },
  no_such_identity: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such identity', meaning: "no such linked identity (another user's answers the same)" },
  password_already_set: {
    code: ApiCode.INVALID_REQUEST,
    status: 409,
    message: 'the account has a password already; change it with PUT /password',
    meaning: 'the account has a password (POST /password/set is for accounts a provider created)',
  },
} as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  // A provider sign-in that succeeds is `login_succeeded` with detail `oidc:<provider>`.
  'oidc_login_failed',
  'oidc_registered',
  'identity_linked',
  'identity_unlinked',
  'password_set',
] as const;

/** How a session was opened through a provider: `oidc:<provider>` (a device's `method`, the audit detail). */
export const signInMethod = z.templateLiteral(['oidc:', z.string().regex(/^[a-z][a-z0-9]{0,14}$/)]).describe('oidc:<provider>: signed in with that OpenID Connect provider');
