// TOTP and recovery codes: set up, enable, disable, the login's second step (POST /login/mfa), and
// TOTP as a second factor of the login and of re-authentication.
import { lt } from 'drizzle-orm';
import { mfaChallenges } from './schema.js';
import type { AccountFeature } from '../feature.js';
import { totpRoutes } from './routes.js';
import { totpReauth } from './reauth.js';
import { TOTP_NOTICE_TEXT } from './mail.js';
import { totpRemoval } from './removal.js';
import { TotpService } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    /** TOTP and recovery codes; the login's second step goes through `sessions`. */
    totp: TotpService;
  }
}

export const totpFeature: AccountFeature = {
  services: ({ deps, db, now, logger, keys, audit, failures, confirmation, fresh, factorNotices, hooks }) => {
    const totp = new TotpService({ db, now, logger, keys, audit, failures, confirmation, fresh, issuer: deps.config.auth.totpIssuer, notices: factorNotices });
    hooks.beforeSession.push((user, client, method) => totp.requireSecondStep(user, client, method));
    return { totp };
  },
  api: ({ kit, services }) => totpRoutes(kit, services.totp, services.sessions),
  // The login's second step: a user with TOTP on gets a challenge (2007) instead of a session.
  loginRefusals: ['mfa_required'],
  reauthFactor: (services) => totpReauth(services.totp),
  factorRemoval: totpRemoval,
  factorNoticeTexts: TOTP_NOTICE_TEXT,
  prune: (db, before) => db.delete(mfaChallenges).where(lt(mfaChallenges.expiresAt, before)),
};
