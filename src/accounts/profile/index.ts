// The caller's profile.
import type { AccountFeature } from '../feature.js';
import { profileRoutes } from './routes.js';

export const profileFeature: AccountFeature = { api: ({ kit, deps, now }) => profileRoutes(kit, deps.database.db, now) };
