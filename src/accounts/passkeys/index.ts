// Passkeys: registration, sign-in, the list and removal.
import { NoticeThrottle } from '../../mail/notice-throttle.js';
import type { AccountFeature } from '../feature.js';
import { Passkeys } from './ceremonies.js';
import { passkeysRoutes } from './routes.js';
import { passkeyReauth } from './reauth.js';
import { passkeyRemoval, passkeySignIn } from './removal.js';
import { PasskeyService, passkeyNotice } from './service.js';

declare module '../feature.js' {
  interface AccountServices {
    passkeys: PasskeyService;
  }
}

export const passkeysFeature: AccountFeature = {
  services: ({ deps, db, keys, now, logger, mailer, audit, fresh }, { sessions }) => {
    const webauthn = deps.config.webauthn;
    // Their own notices ("a passkey was added / removed"), with the same limits as every notice.
    const notices = mailer ? new NoticeThrottle({ mailer, logger, compose: (notice, folded) => passkeyNotice(notice.kind, notice.to, notice.at, folded) }) : undefined;
    const ceremonies = webauthn ? new Passkeys({ db, keys, now, webauthn }) : undefined;
    return { passkeys: new PasskeyService({ logger, now, passkeys: ceremonies, sessions, audit, notices, fresh }) };
  },
  api: ({ kit, services }) => passkeysRoutes(kit, services.passkeys),
  reauthFactor: (services) => passkeyReauth(services.passkeys),
  factorRemoval: passkeyRemoval,
  signInMethod: passkeySignIn,
};
