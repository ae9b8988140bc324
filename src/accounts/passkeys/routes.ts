// POST /passkeys/register/options and /register/verify (authenticated), POST /passkeys/login/options
// and /login/verify (public), GET /passkeys, DELETE /passkeys/{id}, and POST /reauth/passkey/options
// (the challenge of a re-authentication by passkey).
import type { MiddlewareHandler } from 'hono';
import { listPasskeys, passkeyLoginOptions, passkeyLoginVerify, passkeyRegisterOptions, passkeyRegisterVerify, reauthPasskeyOptions, removePasskey } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { ok } from '../shared/envelope.js';
import type { PasskeyService } from './service.js';
import { sessionView } from '../sessions/views.js';
import { passkeyView } from './views.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function passkeysRoutes(kit: RouteKit, passkeys: PasskeyService) {
  // Without WEBAUTHN_RP_ID in production the endpoints do not exist (1004): checked before the body is read.
  const enabled: MiddlewareHandler = async function passkeysEnabled(_c, next) {
    if (!passkeys.available) throw new AuthError('passkeys_disabled');
    await next();
  };
  const authenticated = [enabled, kit.apiLimit, kit.requireSession];
  return createRouter()
    .openapi({ ...passkeyRegisterOptions, middleware: authenticated }, async (c) => ok(c, await passkeys.registrationOptions(c.var.auth)))
    .openapi({ ...passkeyRegisterVerify, middleware: authenticated }, async (c) => {
      const { response, name } = c.req.valid('json');
      return ok(c, passkeyView(await passkeys.register(c.var.auth, response, name, kit.sessionClient(c))));
    })
    .openapi({ ...passkeyLoginOptions, middleware: [enabled, kit.authLimit] }, async (c) => ok(c, await passkeys.loginOptions()))
    .openapi({ ...passkeyLoginVerify, middleware: [kit.countOutcome('login'), enabled, kit.authLimit] }, async (c) =>
      ok(c, sessionView(await passkeys.login(c.req.valid('json').response, kit.sessionClient(c)))),
    )
    .openapi({ ...listPasskeys, middleware: authenticated }, async (c) => ok(c, (await passkeys.list(c.var.auth)).map(passkeyView)))
    .openapi({ ...removePasskey, middleware: authenticated }, async (c) => {
      await passkeys.remove(c.var.auth, c.req.valid('param').id, kit.sessionClient(c));
      return ok(c, null);
    })
    // Limited per client like a login (the auth budget); 1004 from the service when passkeys are off.
    .openapi({ ...reauthPasskeyOptions, middleware: [kit.authLimit, kit.requireSession] }, async (c) => ok(c, await passkeys.reauthOptions(c.var.auth)));
}
