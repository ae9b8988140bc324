// Passkeys (WebAuthn through @simplewebauthn/server): register one (authenticated), sign in
// with one without a username (discoverable credentials), list and remove them. Every field of the
// browser's JSON is bounded here, before anything is decoded or looked up.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse, timeString } from '../shared/contract.js';
import { session } from '../sessions/contract.js';
import { characterCount, hasNoControlCharacters, isStorableText, rule } from '../shared/fields.js';

/** Passkeys one account may hold. */
export const MAX_PASSKEYS_PER_USER = 20;
/** The longest credential id WebAuthn allows: 1023 bytes, 1364 base64url characters. */
export const MAX_CREDENTIAL_ID_BYTES = 1023;
/** The largest COSE public key accepted: 2048 bytes (an RSA-4096 key is about 550). */
export const MAX_PUBLIC_KEY_BYTES = 2048;
/** Transports a credential may list, as WebAuthn names them. */
export const PASSKEY_TRANSPORTS = ['usb', 'nfc', 'ble', 'smart-card', 'hybrid', 'internal', 'cable'] as const;

const base64urlChars = (bytes: number) => Math.ceil((bytes * 4) / 3);
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Base64url text of at most `bytes` bytes (padding, as some browsers add, allowed). */
const base64url = (bytes: number, what: string) =>
  z
    .string(rule(`${what}: base64url of at most ${bytes} bytes`))
    .max(base64urlChars(bytes) + 2, `${what}: base64url of at most ${bytes} bytes`)
    .transform((v) => v.replace(/=+$/, ''))
    .refine((v) => BASE64URL.test(v) && v.length <= base64urlChars(bytes), `${what}: base64url of at most ${bytes} bytes`);

const credentialId = base64url(MAX_CREDENTIAL_ID_BYTES, 'credential id').refine((v) => v.length > 0, 'credential id: not empty');
const CLIENT_DATA_BYTES = 2048;

/** What the browser reports beside the credential: only these are read, anything else is dropped. */
const clientExtensionResults = z.object({ credProps: z.object({ rk: z.boolean().optional() }).optional() }).default({});
const authenticatorAttachment = z.enum(['platform', 'cross-platform']).optional();

/** `PublicKeyCredential.toJSON()` of navigator.credentials.create(), as @simplewebauthn/browser sends it too. */
export const registrationResponse = z.object({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url(CLIENT_DATA_BYTES, 'clientDataJSON'),
    attestationObject: base64url(16 * 1024, 'attestationObject'),
    authenticatorData: base64url(8 * 1024, 'authenticatorData').optional(),
    // Unknown names are dropped (browsers add new ones): only WebAuthn's are kept.
    transports: z
      .array(z.string().max(32), rule('transports: at most 10 names'))
      .max(10, 'transports: at most 10 names')
      .optional()
      .transform((list) => [...new Set((list ?? []).filter((t): t is (typeof PASSKEY_TRANSPORTS)[number] => (PASSKEY_TRANSPORTS as readonly string[]).includes(t)))]),
    publicKeyAlgorithm: z.int().min(-65536).max(65535).optional(),
    publicKey: base64url(MAX_PUBLIC_KEY_BYTES, 'publicKey').optional(),
  }),
  authenticatorAttachment,
  clientExtensionResults,
});

/** `PublicKeyCredential.toJSON()` of navigator.credentials.get(). */
export const authenticationResponse = z.object({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url(CLIENT_DATA_BYTES, 'clientDataJSON'),
    authenticatorData: base64url(8 * 1024, 'authenticatorData'),
    // ML-DSA-44 signatures are 2420 bytes; nothing in use is larger.
    signature: base64url(4096, 'signature'),
    userHandle: base64url(64, 'userHandle').optional(),
  }),
  authenticatorAttachment,
  clientExtensionResults,
});

export type RegistrationResponseBody = z.output<typeof registrationResponse>;
export type AuthenticationResponseBody = z.output<typeof authenticationResponse>;

const PASSKEY_NAME_RULE = 'name: 1-64 characters, no control characters';
export const passkeyName = z
  .string(rule(PASSKEY_NAME_RULE))
  .transform((v) => v.trim())
  .refine((v) => characterCount(v) >= 1 && characterCount(v) <= 64 && isStorableText(v) && hasNoControlCharacters(v), PASSKEY_NAME_RULE);

export const registerVerifyBody = z.object({
  response: registrationResponse,
  /** Missing: "Passkey N". */
  name: passkeyName.optional(),
});

export const loginVerifyBody = z.object({ response: authenticationResponse });

// ------------------------------------------------------------------ outputs

/** PublicKeyCredentialCreationOptionsJSON: give it to PublicKeyCredential.parseCreationOptionsFromJSON (or @simplewebauthn/browser). */
export const creationOptions = z
  .looseObject({
    challenge: z.string(),
    rp: z.looseObject({ name: z.string(), id: z.string().optional() }),
    user: z.looseObject({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.looseObject({ alg: z.number(), type: z.string() })),
    timeout: z.number().optional(),
    excludeCredentials: z.array(z.looseObject({ id: z.string(), type: z.string() })).optional(),
  })
  .describe('options for navigator.credentials.create() (WebAuthn JSON form); the challenge is single use and expires in 5 minutes');

/** PublicKeyCredentialRequestOptionsJSON, with no allowCredentials: the authenticator offers its passkeys for this RP. */
export const requestOptions = z
  .looseObject({ challenge: z.string(), rpId: z.string().optional(), timeout: z.number().optional(), userVerification: z.string().optional() })
  .describe('options for navigator.credentials.get() (WebAuthn JSON form); the challenge is single use and expires in 5 minutes');

export const passkey = z.strictObject({
  id: z.string().describe('opaque passkey id (not the credential id)'),
  name: z.string().describe('the label given at registration'),
  created_at: timeString,
  last_used_at: timeString.nullable().describe('the last sign-in with it; null: never'),
});

export type PasskeyView = z.output<typeof passkey>;

// ------------------------------------------------------------------ routes

const REFUSED_MEANING = "the attestation did not verify, or its challenge is unknown, used, expired (5 min) or another user's";
const DISABLED = ['passkeys_disabled'] as const;

export const passkeyRegisterOptions = accountRoute(
  {
    tags: ['passkeys'],
    method: 'post',
    path: '/passkeys/register/options',
    summary: 'Options to create a passkey for the caller (a single-use challenge, 5 minutes); the existing passkeys are excluded. Needs a verified e-mail address and a fresh session (POST /reauth)',
    security: BEARER,
    responses: { 200: okResponse('creation options', creationOptions) },
  },
  ['invalid_access_token', 'email_not_verified', 'reauthentication_required', 'passkey_limit', ...DISABLED],
);

export const passkeyRegisterVerify = accountRoute(
  {
    tags: ['passkeys'],
    method: 'post',
    path: '/passkeys/register/verify',
    summary: 'Store the passkey the browser created with those options; the owner is mailed a notice',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: registerVerifyBody } } } },
    responses: { 200: okResponse('the new passkey', passkey) },
  },
  ['invalid_request', 'invalid_access_token', 'email_not_verified', 'reauthentication_required', ['passkey_registration_refused', REFUSED_MEANING], 'passkey_limit', 'passkey_exists', ...DISABLED],
);

export const passkeyLoginOptions = accountRoute(
  {
    tags: ['passkeys'],
    method: 'post',
    path: '/passkeys/login/options',
    summary: 'Options to sign in with a passkey, no username needed (a single-use challenge, 5 minutes)',
    responses: { 200: okResponse('request options', requestOptions) },
  },
  [...DISABLED],
);

export const passkeyLoginVerify = accountRoute(
  {
    tags: ['passkeys'],
    method: 'post',
    path: '/passkeys/login/verify',
    summary: "Sign in with the browser's assertion: the login's token set; the session's auth_method is passkey (it satisfies the second factor)",
    request: { body: { required: true, content: { 'application/json': { schema: loginVerifyBody } } } },
    responses: { 200: okResponse('tokens and the user', session) },
  },
  ['invalid_request', 'passkey_login_refused', 'account_banned', ...DISABLED],
);

export const listPasskeys = accountRoute(
  {
    tags: ['passkeys'],
    method: 'get',
    path: '/passkeys',
    summary: "The caller's passkeys, newest first (no key material)",
    security: BEARER,
    responses: { 200: okResponse('the passkeys', z.array(passkey)) },
  },
  ['invalid_access_token', ...DISABLED],
);

export const removePasskey = accountRoute(
  {
    tags: ['passkeys'],
    method: 'delete',
    path: '/passkeys/{id}',
    summary: "Remove one of the caller's passkeys; the owner is mailed a notice",
    security: BEARER,
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: okResponse('passkey removed', z.null()) },
  },
  ['invalid_access_token', 'no_such_passkey', ...DISABLED],
);

/** Options to re-authenticate (POST /reauth) with one of the caller's own passkeys. */
export const reauthPasskeyOptions = accountRoute(
  {
    tags: ['session'],
    method: 'post',
    path: '/reauth/passkey/options',
    summary: "Options to re-authenticate with one of the caller's passkeys (a single-use challenge of this user, 5 minutes)",
    security: BEARER,
    responses: { 200: okResponse("request options listing the caller's passkeys", requestOptions) },
  },
  ['invalid_access_token', ['no_such_passkey', 'the account has no passkey'], 'passkeys_disabled'],
);
