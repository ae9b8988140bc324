// The forgotten password: a mailed code, then a new password.
import { lt } from 'drizzle-orm';
import { passwordResetCodes } from './schema.js';
import type { AccountFeature } from '../feature.js';
import { resetRoutes } from './routes.js';

export const resetFeature: AccountFeature = { api: ({ kit, services }) => resetRoutes(kit, services.reset), prune: (db, before) => db.delete(passwordResetCodes).where(lt(passwordResetCodes.createdAt, before)) };
