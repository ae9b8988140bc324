// Sign-in with OpenID Connect providers (Google, Apple, any by configuration): the native and web
// flows, linked identities, and a first password for accounts a provider created.
import { lt } from 'drizzle-orm';
import type { AccountFeature } from '../feature.js';
import { OIDC_NOTICE_TEXT } from './mail.js';
import { OidcProviders } from './providers.js';
import { oidcRoutes } from './routes.js';
import { oidcFlows, oidcLoginCodes, oidcUsedNonces } from './schema.js';
import { FirstPassword } from './first-password.js';
import { OidcService } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    oidc: OidcService;
    /** POST /password/set for accounts a provider created. */
    firstPassword: FirstPassword;
  }
}

export const oidcFeature: AccountFeature = {
  services: ({ deps, db, keys, now, logger, audit, fresh, factorNotices, signInMethods, addressProof }, { auth, sessions }) => {
    const { config } = deps;
    const providers = new OidcProviders(config.oidc.providers, { logger, issuer: config.auth.issuer, production: config.nodeEnv === 'production' });
    providers.warmUp();
    return {
      firstPassword: new FirstPassword({ db, now, audit, auth, fresh }),
      oidc: new OidcService({ db, keys, now, logger, audit, providers, sessions, fresh, redirectUris: config.oidc.redirectUris, notices: factorNotices, otherSignInMethods: signInMethods, addressProof }),
    };
  },
  api: ({ kit, services, deps }) => oidcRoutes(kit, services.oidc, services.firstPassword, { secureCookies: deps.config.auth.issuer.startsWith('https:') }),
  factorNoticeTexts: OIDC_NOTICE_TEXT,
  prune: async (db, before) => {
    await db.delete(oidcFlows).where(lt(oidcFlows.expiresAt, before));
    await db.delete(oidcLoginCodes).where(lt(oidcLoginCodes.expiresAt, before));
    await db.delete(oidcUsedNonces).where(lt(oidcUsedNonces.expiresAt, before));
  },
};
