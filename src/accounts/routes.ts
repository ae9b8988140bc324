// The account API under /api/v1/auth: parse, call the service, shape the answer.
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/env.js';
import { clientAddress, rateLimit } from '../http/rate-limit.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { deleteAccountBody } from './contract/account.js';
import { headerText, printableText } from './contract/fields.js';
import { changePasswordBody, forgotPasswordBody, resetPasswordBody } from './contract/password.js';
import { updateProfileBody } from './contract/profile.js';
import { loginBody, logoutScope, refreshBody, registerBody } from './contract/session.js';
import type { AccountsDeps } from './deps.js';
import { AuthError } from './errors.js';
import { ApiCode, ApiError, envelopeError, ok } from './http/envelope.js';
import { validate } from './http/validator.js';
import type { AccountServices } from './service/index.js';
import type { Authenticated, SessionClient } from './service.js';
import type { LogoutScope } from './sessions.js';
import { deviceSessionView, profileView, sessionView, tokenSetView } from './views.js';

export type AuthEnv = { Variables: AppEnv['Variables'] & { auth: Authenticated; arrivedAt: Date } };

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * @example app.route('/api/v1/auth', createAuthApp(deps, services))
 */
export function createAuthApp(deps: AccountsDeps, services: AccountServices) {
  const { config } = deps;
  const now = deps.now ?? (() => new Date());
  const { trustProxy } = config.rateLimit;
  const stores = deps.rateLimitStores ?? memoryStores();
  // One limiter (one counter per client) per budget: login and register share theirs.
  const tooMany = (c: Context) => envelopeError(c, new ApiError(ApiCode.RATE_LIMITED, 'too many requests, retry later', 429));
  const authLimit = rateLimit({ tooMany, perMinute: config.rateLimit.authPerMin, trustProxy, store: stores.store('auth') });
  const refreshLimit = rateLimit({ tooMany, perMinute: config.rateLimit.refreshPerMin, trustProxy, store: stores.store('refresh') });
  const apiLimit = rateLimit({ tooMany, perMinute: config.rateLimit.apiPerMin, trustProxy, store: stores.store('api') });

  const requireSession = createMiddleware<AuthEnv>(async function requireSession(c, next) {
    const match = BEARER.exec(c.req.header('authorization') ?? '');
    if (!match) throw new AuthError('invalid_access_token', 'access token missing (Authorization: Bearer <token>)');
    c.set('auth', await services.auth.authenticate(match[1]!));
    await next();
  });

  const sessionClient = (c: Context): SessionClient => ({
    // A forwarding header can carry anything: printable text only, as the User-Agent.
    ip: printableText(clientAddress(c, trustProxy) ?? '').slice(0, 64) || undefined,
    // The device label: trimmed, at most 200 characters (code points, so no surrogate is cut in half).
    userAgent: deviceLabel(c.req.header('user-agent')),
  });

  const resetEnabled = createMiddleware(async function resetEnabled(_c, next) {
    if (!services.passwords.resetAvailable) throw new AuthError('mail_disabled');
    await next();
  });

  return new Hono<AuthEnv>()
    .use(async function arrival(c, next) {
      // Before any await of this request: a refresh compares it with the rotation time of its token.
      c.set('arrivedAt', now());
      await next();
    })
    .post('/register', authLimit, validate('json', registerBody), async (c) => ok(c, sessionView(await services.sessions.register(c.req.valid('json'), sessionClient(c)))))
    .post('/login', authLimit, validate('json', loginBody), async (c) => {
      const { account, password } = c.req.valid('json');
      return ok(c, sessionView(await services.sessions.login(account, password, sessionClient(c))));
    })
    .post('/refresh-token', refreshLimit, validate('json', refreshBody), async (c) =>
      ok(c, tokenSetView(await services.sessions.refresh(c.req.valid('json').refresh_token, c.var.arrivedAt, sessionClient(c)))),
    )
    .post('/logout', apiLimit, requireSession, async (c) => {
      const scope = await logoutScopeOf(c);
      await services.sessions.logout(c.var.auth, scope, sessionClient(c));
      return ok(c, null);
    })
    .get('/profile', apiLimit, requireSession, (c) => ok(c, profileView(c.var.auth.user)))
    .put('/profile', apiLimit, requireSession, validate('json', updateProfileBody), async (c) => ok(c, profileView(await services.profile.update(c.var.auth, c.req.valid('json')))))
    .put('/password', apiLimit, requireSession, validate('json', changePasswordBody), async (c) => {
      const { old_password, new_password } = c.req.valid('json');
      await services.passwords.change(c.var.auth, old_password, new_password, sessionClient(c));
      return ok(c, null);
    })
    .get('/sessions', apiLimit, requireSession, async (c) => ok(c, (await services.devices.list(c.var.auth)).map(deviceSessionView)))
    .delete('/sessions/:id', apiLimit, requireSession, async (c) => {
      await services.devices.end(c.var.auth, c.req.param('id'), sessionClient(c));
      return ok(c, null);
    })
    .delete('/account', apiLimit, requireSession, validate('json', deleteAccountBody), async (c) => {
      await services.account.delete(c.var.auth, c.req.valid('json').password, sessionClient(c));
      return ok(c, null);
    })
    .post('/password/forgot', authLimit, resetEnabled, validate('json', forgotPasswordBody), async (c) => {
      await services.passwords.forgot(c.req.valid('json').email, sessionClient(c));
      return ok(c, null);
    })
    .post('/password/reset', authLimit, resetEnabled, validate('json', resetPasswordBody), async (c) => {
      const { email, code, new_password } = c.req.valid('json');
      await services.passwords.reset(email, code, new_password, sessionClient(c));
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
  if (!parsed.success) throw new ApiError(ApiCode.INVALID_REQUEST, 'scope: one of "current", "others", "all"', 400);
  return parsed.data;
}

/** The User-Agent as stored and served (sessions' device, auth_events.user_agent): printable text only. */
function deviceLabel(userAgent: string | undefined): string | undefined {
  const trimmed = userAgent === undefined ? undefined : printableText(headerText(userAgent)).trim();
  if (!trimmed) return undefined;
  return trimmed.length <= 200 ? trimmed : Array.from(trimmed).slice(0, 200).join('');
}
