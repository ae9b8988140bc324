// POST /reauth: a signed-in session proves a factor again.
import type { AccountFeature } from '../feature.js';
import { reauthRoutes } from './routes.js';

export const reauthFeature: AccountFeature = { api: ({ kit, services, reauthFactors }) => reauthRoutes(kit, services.reauth, reauthFactors) };
