// POST /reauth: a signed-in session proves a factor again (the passkeys feature serves the options of a
// passkey's re-authentication). Limited
// per client like a login (the auth budget), besides the account's failure budget in the service.
import { reauthRoute } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { ReauthService } from './service.js';
import type { ReauthFactor } from '../shared/second-factors.js';
import { formatTime } from '../../time.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function reauthRoutes(kit: RouteKit, reauthentication: ReauthService, factors: readonly ReauthFactor[]) {
  const guarded = [kit.authLimit, kit.requireSession];
  return createRouter()
    .openapi({ ...reauthRoute(factors), middleware: guarded }, async (c) => {
      const marked = await reauthentication.reauthenticate(c.var.auth, c.req.valid('json'), kit.sessionClient(c), factors);
      return ok(c, { reauthenticated_at: formatTime(marked.reauthenticatedAt), fresh_until: formatTime(marked.freshUntil) });
    });
}
