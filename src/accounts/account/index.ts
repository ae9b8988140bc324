// Deleting the account.
import type { AccountFeature } from '../feature.js';
import { AccountDeletion } from './deletion.js';
import { accountRoutes } from './routes.js';

declare module '../feature.js' {
  interface AccountServices {
    deletion: AccountDeletion;
  }
}

export const accountFeature: AccountFeature = {
  services: ({ db, audit, now, confirmation }) => ({ deletion: new AccountDeletion({ db, audit, now, confirmation }) }),
  api: ({ kit, services }) => accountRoutes(kit, services.deletion),
};
