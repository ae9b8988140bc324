// The caller's profile.
import type { AccountFeature } from '../feature.js';
import { profileRoutes } from './routes.js';

export const profileFeature: AccountFeature = { api: ({ kit, services }) => profileRoutes(kit, services.auth) };
