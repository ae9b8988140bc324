// Sign-up, sign-in and sessions (register, login, its second step, refresh, logout), the JWKS and
// token introspection.
import type { AccountFeature } from '../feature.js';
import { sessionRoutes } from './routes.js';
import { SessionService } from './service.js';
import { introspectionRoutes, jwksRoutes } from './tokens-routes.js';

declare module '../feature.js' {
  interface AccountServices {
    sessions: SessionService;
  }
}

export const sessionsFeature: AccountFeature = {
  // What other features do after a registration and before a session comes through the hooks they fill.
  services: ({ db, logger, audit, failures, hooks }, { auth, devices }) => ({
    sessions: new SessionService({
      db,
      logger,
      auth,
      devices,
      audit,
      failures,
      verification: {
        registered: async (user) => {
          for (const hook of hooks.afterRegistration) await hook(user);
        },
      },
      beforeSession: async (user, client, method) => {
        for (const hook of hooks.beforeSession) await hook(user, client, method);
      },
    }),
  }),
  api: ({ kit, services, loginRefusals }) => sessionRoutes(kit, services.sessions, loginRefusals),
  mounts: ({ deps, services }) => [
    { prefix: '/.well-known', surface: 'public', routes: jwksRoutes(services.signingKeys) },
    { prefix: '/internal', surface: 'internal', routes: introspectionRoutes(services.auth, { issuer: deps.config.auth.issuer, audience: deps.config.auth.audience }) },
  ],
};
