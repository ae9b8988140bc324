// The caller's sessions as devices.
import type { AccountFeature } from '../feature.js';
import { devicesRoutes } from './routes.js';

export const devicesFeature: AccountFeature = { api: ({ kit, services }) => devicesRoutes(kit, services.devices) };
