// The forgotten password: a mailed code, then a new password.
import { lt } from 'drizzle-orm';
import { passwordResetCodes } from './schema.js';
import type { AccountFeature } from '../feature.js';
import { resetRoutes } from './routes.js';
import { PasswordReset } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    /** The reset by mailed code; none without mail (the reset endpoints then answer 1004). */
    reset: PasswordReset | undefined;
  }
}

export const resetFeature: AccountFeature = {
  services: ({ deps, db, now, logger, mailer, notices, audit, keys, factors, addressProof, stores }) => ({
    reset:
      mailer && notices
        ? new PasswordReset({
            db,
            now,
            logger,
            mailer,
            notices,
            audit,
            keys,
            factors,
            addressProof,
            hashCost: deps.hashCost,
            budgets: {
              ...deps.config.passwordReset,
              stores: { requests: stores.store('reset-requests'), requestsPerAddress: stores.store('reset-requests-address'), guesses: stores.store('reset-guesses') },
            },
          })
        : undefined,
  }),
  api: ({ kit, services }) => resetRoutes(kit, services.reset),
  prune: (db, before) => db.delete(passwordResetCodes).where(lt(passwordResetCodes.createdAt, before)),
};
