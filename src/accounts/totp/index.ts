// TOTP and recovery codes (the login's second step is the sessions feature's route).
import type { AccountFeature } from '../feature.js';
import { totpRoutes } from './routes.js';

export const totpFeature: AccountFeature = { api: ({ kit, services }) => totpRoutes(kit, services.totp, services.sessions) };
