// Changing the password.
import type { AccountFeature } from '../feature.js';
import { passwordRoutes } from './routes.js';

export const passwordFeature: AccountFeature = { api: ({ kit, services }) => passwordRoutes(kit, services.passwords) };
