// POST /reauth: a signed-in session proves a factor again.
import type { AccountFeature } from '../feature.js';
import { reauthRoutes } from './routes.js';
import { ReauthService } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    /** POST /reauth: a session proves a factor again, and is fresh for REAUTH_WINDOW_S. */
    reauth: ReauthService;
  }
}

export const reauthFeature: AccountFeature = {
  services: ({ db, logger, now, audit, confirmation, fresh }) => ({ reauth: new ReauthService({ db, logger, now, audit, confirmation, fresh }) }),
  api: ({ kit, services, reauthFactors }) => reauthRoutes(kit, services.reauth, reauthFactors),
};
