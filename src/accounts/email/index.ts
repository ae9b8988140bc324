// The account's address: verification and change by mailed codes.
import { lt } from 'drizzle-orm';
import { NoticeThrottle } from '../../mail/notice-throttle.js';
import { AuthError } from '../shared/auth-error.js';
import { Budget } from '../shared/budget.js';
import { emailCodes } from './schema.js';
import type { AccountFeature } from '../feature.js';
import { addressProof } from './proof.js';
import { emailRoutes } from './routes.js';
import { EMAIL_CODES_PER_HOUR, EMAIL_CODES_WINDOW_MS, EmailService, emailChangedNotice } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    /** The account's address: verification and change by mailed codes. */
    email: EmailService;
  }
}

export const emailFeature: AccountFeature = {
  services: ({ db, now, logger, mailer, audit, keys, confirmation, fresh, stores, hooks }) => {
    const email = new EmailService({
      db,
      now,
      logger,
      mailer,
      // "Address changed" notices to the old address, with the same limits as every notice.
      notices: mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => emailChangedNotice(notice.to, notice.at, folded) }) : undefined,
      audit,
      keys,
      confirmation,
      fresh,
      codeRequests: new Budget({ store: stores.store('email-codes'), limit: EMAIL_CODES_PER_HOUR, windowMs: EMAIL_CODES_WINDOW_MS }),
    });
    // The first verification code is mailed after a registration.
    hooks.afterRegistration.push((user) => email.registered(user));
    // A new sign-in factor (a passkey, TOTP) needs an address the owner proved: 2018 before the freshness.
    fresh.newFactorChecks.push((auth) => {
      if (auth.user.emailVerifiedAt === null) throw new AuthError('email_not_verified');
    });
    return { email };
  },
  // A completed reset proves the address too (its code came there): it records the proof this way.
  addressProof,
  api: ({ kit, services }) => emailRoutes(kit, services.email),
  prune: (db, before) => db.delete(emailCodes).where(lt(emailCodes.createdAt, before)),
};
