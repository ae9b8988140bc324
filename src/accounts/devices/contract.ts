// The caller's sessions as devices: list them, end one.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse, timeString } from '../shared/contract.js';
import { SIGN_IN_METHOD_FORMS, SIGN_IN_METHODS } from '../vocabulary.js';

/** One entry of GET /sessions: the public id only, never a token id or a digest. */
/**
 * How a session signed in. `password+totp`: the password and then a TOTP code; `recovery_code`: the
 * password and then a recovery code; `passkey`: a WebAuthn assertion (it satisfies the second factor too);
 * `oidc:<provider>`: an OpenID Connect provider's ID token.
 */
export const authMethod = z.union([z.enum(SIGN_IN_METHODS), ...SIGN_IN_METHOD_FORMS]);
export type AuthMethod = z.output<typeof authMethod>;

export const deviceSession = z.strictObject({
  id: z.string().describe('opaque session id (not a token)'),
  device: z.string().nullable().describe('User-Agent at login, trimmed, at most 200 characters'),
  ip: z.string().nullable().describe('client address at login, as used for rate limits'),
  created_at: timeString,
  last_used_at: timeString.describe('updated at most once a minute'),
  current: z.boolean().describe('the session of the access token of this request'),
  auth_method: authMethod.describe('how the session signed in'),
});

export type DeviceSessionView = z.output<typeof deviceSession>;

export const listSessions = accountRoute(
  {
    tags: ['sessions'],
    method: 'get',
    path: '/sessions',
    summary: "The caller's sessions (devices), newest first",
    security: BEARER,
    responses: { 200: okResponse('the sessions', z.array(deviceSession)) },
  },
  ['invalid_access_token'],
);

export const endSession = accountRoute(
  {
    tags: ['sessions'],
    method: 'delete',
    path: '/sessions/{id}',
    summary: "End one of the caller's sessions: its access and refresh tokens stop working at once",
    security: BEARER,
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: okResponse('session ended', z.null()) },
  },
  ['invalid_access_token', 'no_such_session'],
);
