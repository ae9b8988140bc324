// TURN credentials for a signed-in user.
import type { AccountFeature } from '../feature.js';
import { iceServersRoutes } from './routes.js';

export const iceServersFeature: AccountFeature = { api: ({ kit, deps, now }) => iceServersRoutes(kit, deps.config.turn, now) };
