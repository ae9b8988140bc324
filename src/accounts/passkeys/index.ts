// Passkeys: registration, sign-in, the list and removal.
import type { AccountFeature } from '../feature.js';
import { passkeysRoutes } from './routes.js';

export const passkeysFeature: AccountFeature = { api: ({ kit, services }) => passkeysRoutes(kit, services.passkeys) };
