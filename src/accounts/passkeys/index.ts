// Passkeys: registration, sign-in, the list and removal.
import type { AccountFeature } from '../feature.js';
import { passkeysRoutes } from './routes.js';
import { passkeyReauth } from './reauth.js';

export const passkeysFeature: AccountFeature = {
  api: ({ kit, services }) => passkeysRoutes(kit, services.passkeys),
  reauthFactor: (services) => passkeyReauth(services.passkeys),
};
