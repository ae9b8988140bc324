// POST /mfa/totp/setup, /mfa/totp/enable, DELETE /mfa/totp, and the login's second step POST /login/mfa.
import { disableTotp, enableTotp, loginMfa, setupTotp } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { SessionService } from '../sessions/service.js';
import type { TotpService } from './service.js';
import { sessionView } from '../sessions/views.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function totpRoutes(kit: RouteKit, totp: TotpService, sessions: SessionService) {
  return createRouter()
    .openapi({ ...setupTotp, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
      const { secret, otpauthUrl } = await totp.setup(c.var.auth);
      return ok(c, { secret, otpauth_url: otpauthUrl });
    })
    .openapi({ ...enableTotp, middleware: [kit.apiLimit, kit.requireSession] }, async (c) =>
      ok(c, { recovery_codes: await totp.enable(c.var.auth, c.req.valid('json').code, kit.sessionClient(c)) }),
    )
    .openapi({ ...disableTotp, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
      const { password, code } = c.req.valid('json');
      await totp.disable(c.var.auth, password, code, kit.sessionClient(c));
      return ok(c, null);
    })
    .openapi({ ...loginMfa, middleware: [kit.countOutcome('login'), kit.authLimit] }, async (c) =>
      ok(c, sessionView(await totp.signIn(c.req.valid('json'), kit.sessionClient(c), sessions))),
    );
}
