// GET /oidc/providers, POST /oidc/{provider}/id-token, GET /oidc/{provider}/start, GET and POST /callback, POST /oidc/exchange,
// POST /oidc/{provider}/link/start and /link/id-token, GET /identities, DELETE /identities/{id},
// POST /password/set.
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { AuthError } from '../shared/auth-error.js';
import { ok } from '../shared/envelope.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';
import { sessionView } from '../sessions/views.js';
import { listIdentities, listProviders, oidcCallback, oidcCallbackForm, oidcExchange, oidcIdToken, oidcLinkIdToken, oidcLinkStart, oidcStart, setPassword, unlinkIdentity } from './contract.js';
import type { FirstPassword } from './first-password.js';
import { FLOW_COOKIE, FLOW_TTL_MS, type OidcService } from './service.js';
import { identityView } from './views.js';

export function oidcRoutes(kit: RouteKit, oidc: OidcService, firstPassword: FirstPassword, options: { secureCookies: boolean }) {
  // Without OIDC_PROVIDERS the provider endpoints answer 1004: checked after the rate limit, before the body is read.
  const enabled: MiddlewareHandler = async function oidcEnabled(_c, next) {
    if (oidc.providerNames.length === 0) throw new AuthError('no_such_provider');
    await next();
  };
  const authenticated = [kit.apiLimit, kit.requireSession];
  // A provider that posts its answer (form_post) comes back with a cross-site POST, which a Lax cookie
  // does not go with: its flow cookie is SameSite=None (over https; browsers drop None without Secure).
  // Still bound to this browser: the callback takes only the state this cookie holds.
  const flowCookie = (c: Context, provider: string, value: string) =>
    setCookie(c, FLOW_COOKIE, value, {
      path: `/api/v1/auth/oidc/${provider}/callback`,
      httpOnly: true,
      secure: options.secureCookies,
      sameSite: options.secureCookies && oidc.responseMode(provider) === 'form_post' ? 'None' : 'Lax',
      maxAge: FLOW_TTL_MS / 1000,
    });
  const finish = async (c: Context, provider: string, answer: URLSearchParams) => {
    const { location } = await oidc.callback(provider, answer, getCookie(c, FLOW_COOKIE), kit.sessionClient(c));
    setCookie(c, FLOW_COOKIE, '', { path: `/api/v1/auth/oidc/${provider}/callback`, maxAge: 0 });
    return c.redirect(location, 302);
  };
  return createRouter()
    .openapi({ ...listProviders, middleware: [kit.apiLimit] }, (c) => ok(c, oidc.providerList()))
    .openapi({ ...oidcIdToken, middleware: [kit.countOutcome('login'), kit.authLimit, enabled] }, async (c) => {
      const { id_token, nonce } = c.req.valid('json');
      return ok(c, sessionView(await oidc.signInWithIdToken(c.req.valid('param').provider, id_token, nonce, kit.sessionClient(c))));
    })
    .openapi({ ...oidcStart, middleware: [kit.authLimit, enabled] }, async (c) => {
      const { provider } = c.req.valid('param');
      const { url, cookie } = await oidc.start(provider, c.req.valid('query').redirect_uri);
      flowCookie(c, provider, cookie);
      return c.redirect(url, 302);
    })
    .openapi({ ...oidcCallback, middleware: [kit.authLimit, enabled] }, (c) => finish(c, c.req.valid('param').provider, new URL(c.req.url).searchParams))
    .openapi({ ...oidcCallbackForm, middleware: [kit.authLimit, enabled] }, (c) => {
      const { user: _user, ...answer } = c.req.valid('form');
      return finish(c, c.req.valid('param').provider, new URLSearchParams(Object.entries(answer).filter((entry): entry is [string, string] => entry[1] !== undefined)));
    })
    .openapi({ ...oidcExchange, middleware: [kit.countOutcome('login'), kit.authLimit] }, async (c) => ok(c, sessionView(await oidc.exchange(c.req.valid('json').code, kit.sessionClient(c)))))
    .openapi({ ...oidcLinkStart, middleware: [...authenticated, enabled] }, async (c) => {
      const { provider } = c.req.valid('param');
      const { url, cookie } = await oidc.start(provider, c.req.valid('query').redirect_uri, c.var.auth);
      flowCookie(c, provider, cookie);
      if (/application\/json/i.test(c.req.header('accept') ?? '')) return ok(c, { url });
      return c.redirect(url, 302);
    })
    .openapi({ ...oidcLinkIdToken, middleware: [...authenticated, enabled] }, async (c) => {
      const { id_token, nonce } = c.req.valid('json');
      return ok(c, identityView(await oidc.linkWithIdToken(c.var.auth, c.req.valid('param').provider, id_token, nonce, kit.sessionClient(c))));
    })
    .openapi({ ...listIdentities, middleware: authenticated }, async (c) => ok(c, (await oidc.list(c.var.auth)).map(identityView)))
    .openapi({ ...unlinkIdentity, middleware: authenticated }, async (c) => {
      await oidc.unlink(c.var.auth, c.req.valid('param').id, kit.sessionClient(c));
      return ok(c, null);
    })
    .openapi({ ...setPassword, middleware: authenticated }, async (c) => {
      await firstPassword.set(c.var.auth, c.req.valid('json').password, kit.sessionClient(c));
      return ok(c, null);
    });
}
