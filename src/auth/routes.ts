// The account API under /api/v1/auth: parse, call the service, shape the answer.
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppDeps, AppEnv } from '../app.js';
import { ok } from '../http/envelope.js';
import { clientAddress, rateLimit } from '../http/rate-limit.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { validate } from '../http/validator.js';
import { AuthError } from './errors.js';
import { accountKey, LoginGuard } from './login-guard.js';
import { changePasswordBody, loginBody, refreshBody, registerBody, updateProfileBody } from './schemas.js';
import { AuthService, type Authenticated, type SessionClient } from './service.js';
import { profileView, sessionView, tokenSetView } from './views.js';

export type AuthEnv = { Variables: AppEnv['Variables'] & { auth: Authenticated; arrivedAt: Date } };

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * @example app.route('/api/v1/auth', createAuthApp(deps))
 */
export function createAuthApp(deps: AppDeps) {
  const { config } = deps;
  const now = deps.now ?? (() => new Date());
  const service = new AuthService({
    db: deps.database.db,
    accessTokenTtl: config.auth.accessTokenTtl,
    refreshTokenTtl: config.auth.refreshTokenTtl,
    now,
    logger: deps.logger,
    onRefreshReuse: () => deps.metrics?.recordAuth('refresh', 'reused'),
    refreshReuseGraceS: config.auth.refreshReuseGraceS,
    hashMaxWaitMs: config.auth.hashMaxWaitMs,
  });
  const { trustProxy } = config.rateLimit;
  const stores = deps.rateLimitStores ?? memoryStores();
  // One limiter (one counter per client) per budget: login and register share theirs.
  const authLimit = rateLimit({ perMinute: config.rateLimit.authPerMin, trustProxy, store: stores.store('auth') });
  const refreshLimit = rateLimit({ perMinute: config.rateLimit.refreshPerMin, trustProxy, store: stores.store('refresh') });
  const apiLimit = rateLimit({ perMinute: config.rateLimit.apiPerMin, trustProxy, store: stores.store('api') });
  // Failed logins and failed password changes, per account whatever the client address: one budget.
  const failures = new LoginGuard({
    limit: config.auth.failuresPerAccount,
    windowMs: config.auth.failureWindowS * 1000,
    store: stores.store('failures'),
  });

  const requireSession = createMiddleware<AuthEnv>(async function requireSession(c, next) {
    const match = BEARER.exec(c.req.header('authorization') ?? '');
    if (!match) throw new AuthError('invalid_access_token', 'access token missing (Authorization: Bearer <token>)');
    c.set('auth', await service.authenticate(match[1]!));
    await next();
  });

  const sessionClient = (c: Context): SessionClient => ({
    ip: clientAddress(c, trustProxy)?.slice(0, 64),
    userAgent: c.req.header('user-agent')?.slice(0, 512),
  });

  return new Hono<AuthEnv>()
    .use(async function arrival(c, next) {
      // Before any await of this request: a refresh compares it with the rotation time of its token.
      c.set('arrivedAt', now());
      await next();
    })
    .post('/register', authLimit, validate('json', registerBody), async (c) => {
      const body = c.req.valid('json');
      const result = await service.register(
        { username: body.username, email: body.email, password: body.password, nickname: body.nickname },
        sessionClient(c),
      );
      return ok(c, sessionView(result));
    })
    .post('/login', authLimit, validate('json', loginBody), async (c) => {
      const { account, password } = c.req.valid('json');
      const client = sessionClient(c);
      return ok(c, sessionView(await failures.run([accountKey(account)], () => service.login(account, password, client))));
    })
    .post('/refresh-token', refreshLimit, validate('json', refreshBody), async (c) => {
      return ok(c, tokenSetView(await service.refresh(c.req.valid('json').refresh_token, c.var.arrivedAt)));
    })
    .post('/logout', apiLimit, requireSession, async (c) => {
      await service.logout(c.var.auth.sessionId);
      return ok(c, null);
    })
    .get('/profile', apiLimit, requireSession, (c) => ok(c, profileView(c.var.auth.user)))
    .put('/profile', apiLimit, requireSession, validate('json', updateProfileBody), async (c) => {
      const body = c.req.valid('json');
      const user = await service.updateProfile(c.var.auth.user.id, {
        nickname: body.nickname,
        avatar: body.avatar,
        gender: body.gender,
        phone: body.phone,
      });
      return ok(c, profileView(user));
    })
    .put('/password', apiLimit, requireSession, validate('json', changePasswordBody), async (c) => {
      const { old_password, new_password } = c.req.valid('json');
      const { user } = c.var.auth;
      // The budget of the account's login names, so guesses here and at login add up.
      await failures.run([accountKey(user.username), accountKey(user.email)], () => service.changePassword(c.var.auth, old_password, new_password));
      return ok(c, null);
    });
}
