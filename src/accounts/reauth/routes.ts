// POST /reauth and POST /reauth/passkey/options: a signed-in session proves a factor again. Limited
// per client like a login (the auth budget), besides the account's failure budget in the service.
import { reauth, reauthPasskeyOptions } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { ReauthService } from './service.js';
import { formatTime } from '../../time.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function reauthRoutes(kit: RouteKit, reauthentication: ReauthService) {
  const guarded = [kit.authLimit, kit.requireSession];
  return createRouter()
    .openapi({ ...reauthPasskeyOptions, middleware: [kit.authLimit, kit.requireSession] }, async (c) => ok(c, await reauthentication.passkeyOptions(c.var.auth)))
    .openapi({ ...reauth, middleware: guarded }, async (c) => {
      const marked = await reauthentication.reauthenticate(c.var.auth, c.req.valid('json'), kit.sessionClient(c));
      return ok(c, { reauthenticated_at: formatTime(marked.reauthenticatedAt), fresh_until: formatTime(marked.freshUntil) });
    });
}
