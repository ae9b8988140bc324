// POST /register, /login, /refresh-token, /logout.
import type { Context } from 'hono';
import { loginRoute, logout, logoutScope, refreshToken, register } from './contract.js';
import type { ErrorRow } from '../shared/error-table.js';
import { AuthError } from '../shared/auth-error.js';
import { ok } from '../shared/envelope.js';
import type { SessionService } from './service.js';
import type { LogoutScope } from '../devices/directory.js';
import { sessionView, tokenSetView } from './views.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function sessionRoutes(kit: RouteKit, sessions: SessionService, loginRefusals: readonly ErrorRow[]) {
  return createRouter()
    .openapi({ ...register, middleware: [kit.authLimit] }, async (c) => ok(c, sessionView(await sessions.register(c.req.valid('json'), kit.sessionClient(c)))))
    .openapi({ ...loginRoute(loginRefusals), middleware: [kit.countOutcome('login'), kit.authLimit] }, async (c) => {
      const { account, password } = c.req.valid('json');
      return ok(c, sessionView(await sessions.login(account, password, kit.sessionClient(c))));
    })
    .openapi({ ...refreshToken, middleware: [kit.countOutcome('refresh'), kit.refreshLimit] }, async (c) =>
      ok(c, tokenSetView(await sessions.refresh(c.req.valid('json').refresh_token, c.var.arrivedAt, kit.sessionClient(c)))),
    )
    .openapi({ ...logout, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
      await sessions.logout(c.var.auth, await logoutScopeOf(c), kit.sessionClient(c));
      return ok(c, null);
    });
}

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Logout's optional body. Only a JSON object with a `scope` is read; anything else (no body, another
 * content type, not JSON, no `scope`) means `current`, exactly as logout behaved before it had a body.
 */
async function logoutScopeOf(c: Context): Promise<LogoutScope> {
  const mediaType = (c.req.header('content-type') ?? '').split(';')[0]!.trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) return 'current';
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return 'current';
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Object.hasOwn(body, 'scope')) return 'current';
  const parsed = logoutScope.safeParse((body as { scope: unknown }).scope);
  if (!parsed.success) throw new AuthError('invalid_request', 'scope: one of "current", "others", "all"');
  return parsed.data;
}
