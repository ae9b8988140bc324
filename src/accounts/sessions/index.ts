// Sign-up, sign-in and sessions (register, login, its second step, refresh, logout), the JWKS and
// token introspection.
import type { AccountFeature } from '../feature.js';
import { sessionRoutes } from './routes.js';
import { introspectionRoutes, jwksRoutes } from './tokens-routes.js';

export const sessionsFeature: AccountFeature = {
  api: ({ kit, services, loginRefusals }) => sessionRoutes(kit, services.sessions, loginRefusals),
  mounts: ({ deps, services }) => [
    { prefix: '/.well-known', surface: 'public', routes: jwksRoutes(services.signingKeys) },
    { prefix: '/internal', surface: 'internal', routes: introspectionRoutes(services.auth, { issuer: deps.config.auth.issuer, audience: deps.config.auth.audience }) },
  ],
};
