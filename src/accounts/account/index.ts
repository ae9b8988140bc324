// Deleting the account.
import type { AccountFeature } from '../feature.js';
import { accountRoutes } from './routes.js';

export const accountFeature: AccountFeature = { api: ({ kit, services }) => accountRoutes(kit, services.deletion) };
