// Changing the password.
import type { AccountFeature } from '../feature.js';
import { passwordRoutes } from './routes.js';
import { PasswordService } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    passwords: PasswordService;
  }
}

export const passwordFeature: AccountFeature = {
  services: ({ db, logger, now, audit, confirmation, notices }, { auth, devices }) => ({ passwords: new PasswordService({ db, logger, now, auth, devices, audit, confirmation, notices }) }),
  api: ({ kit, services }) => passwordRoutes(kit, services.passwords),
};
