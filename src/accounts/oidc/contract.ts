// Sign-in with OpenID Connect providers: the native flow (an ID token from the provider's SDK), the
// web flow (start → provider → callback → the app's redirect_uri with a one-time code → exchange),
// linking identities to the signed-in account, listing and unlinking them, and a first password for
// an account a provider created. Every field bounded here.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse, timeString } from '../shared/contract.js';
import { password, rule } from '../shared/fields.js';
import { session } from '../sessions/contract.js';

const provider = z.object({ provider: z.string().max(15).describe('a provider named in OIDC_PROVIDERS') });
const ID_TOKEN_RULE = 'id_token: a compact JWT of at most 16384 characters';
const NONCE_RULE = 'nonce: 1-512 characters';

export const idTokenBody = z.object({
  id_token: z.string(rule(ID_TOKEN_RULE)).min(1, ID_TOKEN_RULE).max(16_384, ID_TOKEN_RULE).regex(/^[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/, ID_TOKEN_RULE),
  nonce: z
    .string(rule(NONCE_RULE))
    .min(1, NONCE_RULE)
    .max(512, NONCE_RULE)
    .describe("the nonce the app gave the provider's SDK, as the app holds it (raw); a provider configured sha256 carries its hex SHA-256. Each nonce is taken once: an ID token with a nonce taken before answers 2019"),
});
export const redirectQuery = z.object({ redirect_uri: z.string(rule('redirect_uri: one of OIDC_REDIRECT_URIS')).max(2048, 'redirect_uri: one of OIDC_REDIRECT_URIS') });
const callbackQuery = z.object({
  state: z.string().max(256).optional(),
  code: z.string().max(2048).optional(),
  iss: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
});
/** The same answer as a form (response_mode=form_post, Apple's); `user`: Apple's name and address at the first sign-in (not used). */
export const callbackForm = callbackQuery.extend({ user: z.string().max(2048).optional() });
const CODE_RULE = 'code: the one-time code of the web flow';
export const exchangeBody = z.object({ code: z.string(rule(CODE_RULE)).min(1, CODE_RULE).max(128, CODE_RULE) });
export const setPasswordBody = z.object({ password });

export const identity = z.strictObject({
  id: z.string().describe('opaque identity id'),
  provider: z.string().describe('the provider, as named in OIDC_PROVIDERS'),
  email: z.string().nullable().describe('the e-mail address the provider gave at the last sign-in'),
  linked_at: timeString,
  last_used_at: timeString.nullable().describe('the last sign-in with it; null: never'),
});
export type IdentityView = z.output<typeof identity>;

export const providerView = z.strictObject({
  name: z.string().describe('the name in OIDC_PROVIDERS: the {provider} of the /oidc routes'),
  label: z.string().describe('what a "Sign in with …" button says (OIDC_<NAME>_LABEL, else the name capitalised)'),
});
export type ProviderView = z.output<typeof providerView>;

const redirect = (description: string) => ({ description, headers: z.object({ Location: z.string() }) });
const PROVIDER_ERRORS = ['no_such_provider', 'oidc_unavailable'] as const;
const SIGN_IN_ERRORS = ['oidc_link_required', 'oidc_email_unusable', 'account_banned', 'mfa_required'] as const;

export const listProviders = accountRoute(
  {
    tags: ['oidc'],
    method: 'get',
    path: '/oidc/providers',
    summary: 'The configured sign-in providers, in OIDC_PROVIDERS order, for a sign-in page\'s buttons: each name and label only (empty without OIDC_PROVIDERS)',
    responses: { 200: okResponse('the providers', z.array(providerView)) },
  },
  [],
);

export const oidcIdToken = accountRoute(
  {
    tags: ['oidc'],
    method: 'post',
    path: '/oidc/{provider}/id-token',
    summary:
      "Sign in with an ID token a provider's SDK gave the app (Sign in with Apple, Google): the login's token set; a new identity whose e-mail no account holds creates an account (no password). With a second factor on, 2007 and the login's second step",
    request: { params: provider, body: { required: true, content: { 'application/json': { schema: idTokenBody } } } },
    responses: { 200: okResponse('tokens and the user', session) },
  },
  ['invalid_request', 'oidc_refused', 'oidc_token_replayed', ...SIGN_IN_ERRORS, ...PROVIDER_ERRORS],
);

export const oidcStart = accountRoute(
  {
    tags: ['oidc'],
    method: 'get',
    path: '/oidc/{provider}/start',
    summary:
      "Start the web sign-in: 302 to the provider (authorization code, PKCE S256, state, nonce); the flow is bound to this browser by a short-lived cookie. It ends at redirect_uri with ?code= (POST /oidc/exchange) or ?error=<kind>&error_code=<code>",
    request: { params: provider, query: redirectQuery },
    responses: { 302: redirect("to the provider's authorization endpoint") },
  },
  ['invalid_request', 'oidc_redirect_uri', 'rate_limited', ...PROVIDER_ERRORS],
);

export const oidcCallback = accountRoute(
  {
    tags: ['oidc'],
    method: 'get',
    path: '/oidc/{provider}/callback',
    summary:
      "The provider's redirect back (register <AUTH_ISSUER>/api/v1/auth/oidc/<provider>/callback at the provider): checks state against this browser's cookie, the iss parameter (RFC 9207), exchanges the code and verifies the ID token; then 302 to the app's redirect_uri",
    request: { params: provider, query: callbackQuery },
    responses: { 302: redirect("to the app's redirect_uri with code (sign-in), linked=<provider> (link), or error and error_code") },
  },
  ['invalid_request', 'oidc_refused', ...PROVIDER_ERRORS],
);

export const oidcCallbackForm = accountRoute(
  {
    tags: ['oidc'],
    method: 'post',
    path: '/oidc/{provider}/callback',
    summary:
      "The provider's answer posted as a form (response_mode=form_post: Apple's, with the name or email scope; OIDC_<NAME>_RESPONSE_MODE): the same checks and answers as the GET callback",
    request: { params: provider, body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: callbackForm } } } },
    responses: { 302: redirect("to the app's redirect_uri with code (sign-in), linked=<provider> (link), or error and error_code") },
  },
  ['invalid_request', 'oidc_refused', ...PROVIDER_ERRORS],
);

export const oidcExchange = accountRoute(
  {
    tags: ['oidc'],
    method: 'post',
    path: '/oidc/exchange',
    summary: "The web sign-in's one-time code (single use, 60 s) for the login's token set (2007 with a second factor on)",
    request: { body: { required: true, content: { 'application/json': { schema: exchangeBody } } } },
    responses: { 200: okResponse('tokens and the user', session) },
  },
  ['invalid_request', 'oidc_code_refused', 'account_banned', 'mfa_required'],
);

export const oidcLinkStart = accountRoute(
  {
    tags: ['oidc'],
    method: 'post',
    path: '/oidc/{provider}/link/start',
    summary:
      'Link a provider to the caller (a fresh session, REAUTH_WINDOW_S): 302 to the provider, or with Accept: application/json the URL to open; the web flow ends at redirect_uri with ?linked=<provider> or ?error=',
    security: BEARER,
    request: { params: provider, query: redirectQuery },
    responses: { 200: okResponse("the provider's authorization URL (Accept: application/json)", z.strictObject({ url: z.string() })), 302: redirect("to the provider's authorization endpoint") },
  },
  ['invalid_request', 'invalid_access_token', 'reauthentication_required', 'oidc_redirect_uri', 'rate_limited', ...PROVIDER_ERRORS],
);

export const oidcLinkIdToken = accountRoute(
  {
    tags: ['oidc'],
    method: 'post',
    path: '/oidc/{provider}/link/id-token',
    summary: "Link the identity of an ID token from the provider's SDK to the caller (a fresh session); the owner is mailed a notice",
    security: BEARER,
    request: { params: provider, body: { required: true, content: { 'application/json': { schema: idTokenBody } } } },
    responses: { 200: okResponse('the linked identity', identity) },
  },
  ['invalid_request', 'invalid_access_token', 'reauthentication_required', 'oidc_refused', 'oidc_token_replayed', 'oidc_identity_taken', ...PROVIDER_ERRORS],
);

export const listIdentities = accountRoute(
  {
    tags: ['oidc'],
    method: 'get',
    path: '/identities',
    summary: "The caller's identities at sign-in providers, newest first",
    security: BEARER,
    responses: { 200: okResponse('the identities', z.array(identity)) },
  },
  ['invalid_access_token'],
);

export const unlinkIdentity = accountRoute(
  {
    tags: ['oidc'],
    method: 'delete',
    path: '/identities/{id}',
    summary: 'Unlink one of the caller\'s identities; refused when it is the last way to sign in (no password, no other identity, no other way to sign in); the owner is mailed a notice',
    security: BEARER,
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: okResponse('identity unlinked', z.null()) },
  },
  ['invalid_access_token', 'no_such_identity', 'oidc_last_method'],
);

export const setPassword = accountRoute(
  {
    tags: ['password'],
    method: 'post',
    path: '/password/set',
    summary: 'Set a first password on an account a provider created (a fresh session, REAUTH_WINDOW_S)',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: setPasswordBody } } } },
    responses: { 200: okResponse('password set', z.null()) },
  },
  ['invalid_request', 'invalid_access_token', 'reauthentication_required', 'password_already_set', 'weak_password', 'server_busy'],
);
