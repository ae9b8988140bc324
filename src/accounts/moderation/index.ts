// Operators: look users up, ban, clear second factors (the internal surface).
import type { AccountFeature } from '../feature.js';
import { moderationRoutes } from './routes.js';
import { MFA_CLEARED_NOTICE, Moderation } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    /** Operators: look users up, ban, clear second factors (the internal surface). */
    moderation: Moderation;
  }
}

export const moderationFeature: AccountFeature = {
  services: ({ db, audit, now, factors, factorNotices }) => ({ moderation: new Moderation({ db, audit, now, factors, notices: factorNotices }) }),
  // The owner's notice of a clearing shares the second factors' notice limiter.
  factorNoticeTexts: { mfa_cleared: MFA_CLEARED_NOTICE },
  mounts: ({ services, now }) => [{ prefix: '/internal', surface: 'internal', routes: moderationRoutes(services.moderation, now) }],
};
