// The account's address: verification and change by mailed codes.
import type { AccountFeature } from '../feature.js';
import { emailRoutes } from './routes.js';

export const emailFeature: AccountFeature = { api: ({ kit, services }) => emailRoutes(kit, services.email) };
