// The forgotten password: a mailed code, then a new password.
import type { AccountFeature } from '../feature.js';
import { resetRoutes } from './routes.js';

export const resetFeature: AccountFeature = { api: ({ kit, services }) => resetRoutes(kit, services.reset) };
