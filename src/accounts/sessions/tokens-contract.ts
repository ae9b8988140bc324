// What other services use to trust the access tokens: the signing keys as a JWKS (public, for local
// verification) and introspection (internal token, RFC 7662, for revocation at once).
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';

/** The longest token introspection reads (a JWT we sign is about 450 characters). */
export const MAX_INTROSPECTED_TOKEN_LENGTH = 4096;

const publicJwk = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().describe('the public key, base64url'),
  kid: z.string().describe('the JWK thumbprint (RFC 7638), also the `kid` header of the tokens it signs'),
  alg: z.literal('EdDSA'),
  use: z.literal('sig'),
});

export const jwksDocument = z.strictObject({ keys: z.array(publicJwk).describe('every key published now: the one signing, the next one before it signs, and the previous one until its last token expires') });

export const getJwks = createRoute({
  tags: ['keys'],
  method: 'get',
  path: '/jwks.json',
  summary: 'The public keys that verify access tokens (JWKS, RFC 7517); cache it no longer than Cache-Control says',
  responses: {
    200: {
      description: 'the published keys; Cache-Control: public, max-age below the lead time of a new key',
      headers: z.object({ 'Cache-Control': z.string() }),
      content: { 'application/json': { schema: jwksDocument } },
    },
  },
});

/** RFC 7662 §2.1: `token` and an optional hint; other parameters are ignored. */
export const introspectionRequest = z.object({
  token: z.string().min(1).max(MAX_INTROSPECTED_TOKEN_LENGTH),
  token_type_hint: z.string().max(64).optional(),
});

export const introspectionAnswer = z.union([
  z.strictObject({
    active: z.literal(true),
    sub: z.string().describe('the user id'),
    sid: z.string().describe("the session's public id"),
    username: z.string(),
    roles: z.array(z.string()),
    exp: z.int().describe('Unix time, seconds'),
    iat: z.int().describe('Unix time, seconds'),
    iss: z.string(),
    aud: z.string(),
    token_type: z.literal('access_token'),
  }),
  z.strictObject({ active: z.literal(false) }),
]);

export type IntrospectionView = z.output<typeof introspectionAnswer>;

/** The internal face's error body (src/http/internal-errors.ts answers it). */
const internalError = z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

export const introspect = createRoute({
  tags: ['tokens'],
  method: 'post',
  path: '/v1/auth/introspect',
  summary: 'Token introspection (RFC 7662): whether an access token is active now, and whose it is',
  description:
    'The body is JSON {"token": …} or the RFC\'s form (application/x-www-form-urlencoded, token=…). An unknown, expired, revoked (logout, refresh, password change, ban, deletion) or malformed token is {"active": false}. Not limited by the end-user rate limits.',
  request: {
    body: {
      required: false,
      content: {
        'application/json': { schema: introspectionRequest },
        'application/x-www-form-urlencoded': { schema: introspectionRequest },
      },
    },
  },
  responses: {
    200: { description: 'the token is active, or not', content: { 'application/json': { schema: introspectionAnswer } } },
    400: {
      description: 'VALIDATION_ERROR: no token, a token over 4096 characters, or a body that is neither JSON nor a form',
      content: { 'application/json': { schema: internalError } },
    },
  },
});
