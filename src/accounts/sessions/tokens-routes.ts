// GET /.well-known/jwks.json (public) and POST /internal/v1/auth/introspect (internal token, the
// internal face's error shape).
import { OpenAPIHono } from '@hono/zod-openapi';
import type { ZodError } from 'zod';
import type { AppEnv } from '../../http/env.js';
import { internalValidationError } from '../../http/internal-errors.js';
import { getJwks, introspect, type IntrospectionView } from './tokens-contract.js';
import type { AuthService } from './auth-service.js';
import type { SigningKeys } from './signing-keys.js';

function bodyHook(result: { success: boolean; error?: ZodError }): void {
  if (!result.success && result.error) {
    throw internalValidationError(result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })));
  }
}

/** @example app.route('/.well-known', jwksRoutes(keys)) */
export function jwksRoutes(keys: SigningKeys) {
  return new OpenAPIHono<AppEnv>().openapi(getJwks, async (c) => {
    const jwks = await keys.jwks();
    c.header('Cache-Control', `public, max-age=${keys.jwksMaxAgeS}`);
    return c.json(jwks, 200);
  });
}

/** @example app.route('/internal', introspectionRoutes(auth, { issuer, audience })) */
export function introspectionRoutes(auth: AuthService, claims: { issuer: string; audience: string }) {
  return new OpenAPIHono<AppEnv>({ defaultHook: bodyHook }).openapi(introspect, async (c) => {
    const token = c.req.valid('json').token ?? c.req.valid('form').token;
    if (token === undefined) {
      throw internalValidationError([{ path: 'token', message: 'required: a JSON body {"token": …} or a form body token=… (application/x-www-form-urlencoded)' }]);
    }
    const active = await auth.introspect(token);
    const answer: IntrospectionView = active
      ? { active: true, ...active, iss: claims.issuer, aud: claims.audience, token_type: 'access_token' }
      : { active: false };
    // RFC 7662 §2.2 and OAuth: a token's status is never cached.
    c.header('Cache-Control', 'no-store');
    return c.json(answer, 200);
  });
}
