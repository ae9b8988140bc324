// TOTP and recovery codes: set up, enable, disable, the login's second step (POST /login/mfa), and
// TOTP as a second factor of the login and of re-authentication.
import { lt } from 'drizzle-orm';
import { mfaChallenges } from './schema.js';
import type { AccountFeature } from '../feature.js';
import { totpRoutes } from './routes.js';
import { totpReauth } from './reauth.js';

export const totpFeature: AccountFeature = {
  api: ({ kit, services }) => totpRoutes(kit, services.totp, services.sessions),
  // The login's second step: a user with TOTP on gets a challenge (2007) instead of a session.
  loginRefusals: ['mfa_required'],
  reauthFactor: (services) => totpReauth(services.totp),
  prune: (db, before) => db.delete(mfaChallenges).where(lt(mfaChallenges.expiresAt, before)),
};
