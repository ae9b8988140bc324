// The account's address: verification and change by mailed codes.
import { lt } from 'drizzle-orm';
import { emailCodes } from './schema.js';
import type { AccountFeature } from '../feature.js';
import { emailRoutes } from './routes.js';

export const emailFeature: AccountFeature = { api: ({ kit, services }) => emailRoutes(kit, services.email), prune: (db, before) => db.delete(emailCodes).where(lt(emailCodes.createdAt, before)) };
