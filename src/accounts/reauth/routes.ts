// POST /reauth: a signed-in session proves a factor again (the passkeys feature serves the options of a
// passkey's re-authentication). Limited
// per client like a login (the auth budget), besides the account's failure budget in the service.
import { reauth } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { ReauthService } from './service.js';
import { formatTime } from '../../time.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function reauthRoutes(kit: RouteKit, reauthentication: ReauthService) {
  const guarded = [kit.authLimit, kit.requireSession];
  return createRouter()
    .openapi({ ...reauth, middleware: guarded }, async (c) => {
      const marked = await reauthentication.reauthenticate(c.var.auth, c.req.valid('json'), kit.sessionClient(c));
      return ok(c, { reauthenticated_at: formatTime(marked.reauthenticatedAt), fresh_until: formatTime(marked.freshUntil) });
    });
}
