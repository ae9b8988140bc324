// The account API under /api/v1/auth: parse, call the service, shape the answer.
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/env.js';
import type { AccountsDeps } from './deps.js';
import { ApiCode, ApiError, envelopeError, ok } from './http/envelope.js';
import { clientAddress, rateLimit } from '../http/rate-limit.js';
import { memoryStores } from '../http/rate-limit-store.js';
import { validate } from './http/validator.js';
import { createMailer } from '../mail/mailer.js';
import { NoticeThrottle } from '../mail/notice-throttle.js';
import { AccountDeletion, userIdOfAccount } from './account.js';
import { AuditLog, normaliseAccount } from './audit.js';
import { AuthError } from './errors.js';
import { accountKey, LoginGuard } from './login-guard.js';
import { assertAcceptablePassword } from './password-policy.js';
import { PasswordReset, passwordChangedNotice } from './password-reset.js';
import { deleteAccountBody } from './contract/account.js';
import { headerText, printableText } from './contract/fields.js';
import { changePasswordBody, forgotPasswordBody, resetPasswordBody } from './contract/password.js';
import { updateProfileBody } from './contract/profile.js';
import { loginBody, logoutScope, refreshBody, registerBody } from './contract/session.js';
import { AuthService, type Authenticated, type SessionClient } from './service.js';
import { SessionDirectory, type LogoutScope } from './sessions.js';
import { deviceSessionView, profileView, sessionView, tokenSetView } from './views.js';

export type AuthEnv = { Variables: AppEnv['Variables'] & { auth: Authenticated; arrivedAt: Date } };

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * @example app.route('/api/v1/auth', createAuthApp(deps))
 */
export function createAuthApp(deps: AccountsDeps & { audit: AuditLog }) {
  const { config } = deps;
  const now = deps.now ?? (() => new Date());
  const db = deps.database.db;
  const { audit } = deps;
  const service = new AuthService({
    db,
    accessTokenTtl: config.auth.accessTokenTtl,
    refreshTokenTtl: config.auth.refreshTokenTtl,
    now,
    logger: deps.logger,
    // `client`: who presented the token, passed down by refresh() (not through AsyncLocalStorage,
    // whose promise hooks, once on, cost every promise of the process).
    onRefreshReuse: (revoked, client) => {
      deps.metrics?.recordAuth('refresh', 'reused');
      const common = { userId: revoked.userId, sessionId: revoked.sessionPublicId, ip: client?.ip, userAgent: client?.userAgent };
      void audit.record({ type: 'refresh_reuse_detected', ...common }, { type: 'session_ended', ...common, detail: 'refresh_reuse' });
    },
    refreshReuseGraceS: config.auth.refreshReuseGraceS,
    hashMaxWaitMs: config.auth.hashMaxWaitMs,
  });
  const devices = new SessionDirectory({ db, now });
  const deletion = new AccountDeletion({ db, audit });
  const { trustProxy } = config.rateLimit;
  const stores = deps.rateLimitStores ?? memoryStores();
  const mailer = createMailer(config, deps.logger);
  // "Password changed" notices: one per account and recipient per 10 minutes, later ones folded.
  const notices = mailer
    ? new NoticeThrottle({ mailer, logger: deps.logger, compose: (notice, folded) => passwordChangedNotice(notice.to, notice.at, folded) })
    : undefined;
  const keys = deps.authKeys;
  if (!keys) throw new Error('the account API needs AUTH_KEY_SECRET (deps.authKeys or config.authKeySecret)');
  const reset =
    mailer && notices
      ? new PasswordReset({
          db,
          now,
          logger: deps.logger,
          mailer,
          notices,
          audit,
          keys,
          budgets: {
            ...config.passwordReset,
            stores: { requests: stores.store('reset-requests'), requestsPerAddress: stores.store('reset-requests-address'), guesses: stores.store('reset-guesses') },
          },
        })
      : undefined;
  // One limiter (one counter per client) per budget: login and register share theirs.
  const tooMany = (c: Context) => envelopeError(c, new ApiError(ApiCode.RATE_LIMITED, 'too many requests, retry later', 429));
  const authLimit = rateLimit({ tooMany, perMinute: config.rateLimit.authPerMin, trustProxy, store: stores.store('auth') });
  const refreshLimit = rateLimit({ tooMany, perMinute: config.rateLimit.refreshPerMin, trustProxy, store: stores.store('refresh') });
  const apiLimit = rateLimit({ tooMany, perMinute: config.rateLimit.apiPerMin, trustProxy, store: stores.store('api') });
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
    // A forwarding header can carry anything: printable text only, as the User-Agent.
    ip: printableText(clientAddress(c, trustProxy) ?? '').slice(0, 64) || undefined,
    // The device label: trimmed, at most 200 characters (code points, so no surrogate is cut in half).
    userAgent: deviceLabel(c.req.header('user-agent')),
  });

  /**
   * Work after an action that has already happened (the session cap, audit rows): a failure here is
   * logged, and the caller still gets the answer of the action, which stands.
   */
  async function afterwards(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, `account API: ${what} failed after the action succeeded`);
    }
  }

  /** After register or login: the session cap, and the audit row with the new session's public id. */
  function opened(type: 'registered' | 'login_succeeded', userId: number, accessToken: string, client: SessionClient, account?: string) {
    return afterwards(type, async () => {
      const session = await devices.byAccessId(accessToken.split('.')[0]!);
      const trimmed = session ? await devices.trimToCap(userId, session.id) : [];
      await audit.record(
        { type, userId, sessionId: session?.publicId, account, ip: client.ip, userAgent: client.userAgent },
        ...trimmed.map((id) => ({ type: 'session_ended' as const, userId, sessionId: id, detail: 'session_limit', ip: client.ip, userAgent: client.userAgent })),
      );
    });
  }

  /**
   * A password check of an authenticated user (password change, account deletion): a wrong password
   * is audited like a failed login. A refusal before any check (the account's failure budget spent,
   * busy) writes nothing, so a flood cannot turn into writes: rows per account stay within
   * LOGIN_FAILURES_PER_ACCOUNT per window.
   */
  async function checkedPassword(type: 'password_change_failed' | 'account_deletion_failed', userId: number, client: SessionClient, check: () => Promise<void>): Promise<void> {
    try {
      await check();
    } catch (error) {
      if (error instanceof AuthError && error.reason === 'wrong_old_password') {
        await audit.record({ type, userId, detail: type === 'account_deletion_failed' ? 'wrong_password' : 'wrong_old_password', ip: client.ip, userAgent: client.userAgent });
      }
      throw error;
    }
  }

  const resetEnabled = createMiddleware(async function resetEnabled(_c, next) {
    if (!reset) throw new AuthError('mail_disabled');
    await next();
  });

  return new Hono<AuthEnv>()
    .use(async function arrival(c, next) {
      // Before any await of this request: a refresh compares it with the rotation time of its token.
      c.set('arrivedAt', now());
      await next();
    })
    .post('/register', authLimit, validate('json', registerBody), async (c) => {
      const body = c.req.valid('json');
      assertAcceptablePassword('password', body.password, body);
      const client = sessionClient(c);
      const result = await service.register(
        { username: body.username, email: body.email, password: body.password, nickname: body.nickname },
        client,
      );
      await opened('registered', result.user.id, result.tokens.accessToken, client);
      return ok(c, sessionView(result));
    })
    .post('/login', authLimit, validate('json', loginBody), async (c) => {
      const { account, password } = c.req.valid('json');
      const client = sessionClient(c);
      let result;
      try {
        result = await failures.run([accountKey(account)], () => service.login(account, password, client));
      } catch (error) {
        // A refusal before any password was checked (busy, or the account's failure budget spent) is
        // no authentication event: counted in metrics, not written, so a flood cannot turn into writes.
        if (error instanceof AuthError && error.reason !== 'server_busy' && error.reason !== 'too_many_failures') {
          const userId = error.reason === 'no_such_account' ? undefined : await userIdOfAccount(db, account).catch(() => undefined);
          await audit.record({ type: 'login_failed', userId, account: normaliseAccount(account), detail: error.reason, ip: client.ip, userAgent: client.userAgent });
        }
        throw error;
      }
      await opened('login_succeeded', result.user.id, result.tokens.accessToken, client, normaliseAccount(account));
      return ok(c, sessionView(result));
    })
    .post('/refresh-token', refreshLimit, validate('json', refreshBody), async (c) => {
      const refreshToken = c.req.valid('json').refresh_token;
      return ok(c, tokenSetView(await service.refresh(refreshToken, c.var.arrivedAt, sessionClient(c))));
    })
    .post('/logout', apiLimit, requireSession, async (c) => {
      const scope = await logoutScopeOf(c);
      const { auth } = c.var;
      const client = sessionClient(c);
      const ended = await devices.endByScope(auth.user.id, auth.sessionId, scope);
      await audit.record(
        ...ended.map((id) => ({ type: 'session_ended' as const, userId: auth.user.id, sessionId: id, detail: 'user', ip: client.ip, userAgent: client.userAgent })),
      );
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
      const { auth } = c.var;
      assertAcceptablePassword('new_password', new_password, auth.user);
      const client = sessionClient(c);
      // For the audit: the sessions the change is about to end (the service deletes them in its statement).
      const others = await devices.publicIds(auth.user.id, auth.sessionId);
      // The budget of the account's login names, so guesses here and at login add up.
      await checkedPassword('password_change_failed', auth.user.id, client, () =>
        failures.run([accountKey(auth.user.username), accountKey(auth.user.email)], () => service.changePassword(auth, old_password, new_password)),
      );
      notices?.notify({ kind: 'password_changed', account: String(auth.user.id), to: auth.user.email, at: now() });
      await afterwards('password change audit', async () => {
        const ended = await devices.gone(others);
        await audit.record(
          ...ended.map((id) => ({ type: 'session_ended' as const, userId: auth.user.id, sessionId: id, detail: 'password_change', ip: client.ip, userAgent: client.userAgent })),
          { type: 'password_changed', userId: auth.user.id, ip: client.ip, userAgent: client.userAgent },
        );
      });
      return ok(c, null);
    })
    .get('/sessions', apiLimit, requireSession, async (c) => {
      const { auth } = c.var;
      return ok(c, (await devices.list(auth.user.id, auth.sessionId)).map(deviceSessionView));
    })
    .delete('/sessions/:id', apiLimit, requireSession, async (c) => {
      const { auth } = c.var;
      const client = sessionClient(c);
      const ended = await devices.end(auth.user.id, c.req.param('id'));
      await audit.record({ type: 'session_ended', userId: auth.user.id, sessionId: ended.publicId, detail: 'user', ip: client.ip, userAgent: client.userAgent });
      return ok(c, null);
    })
    .delete('/account', apiLimit, requireSession, validate('json', deleteAccountBody), async (c) => {
      const { user } = c.var.auth;
      // A password check like PUT /password: it spends the same per-account budget.
      await checkedPassword('account_deletion_failed', user.id, sessionClient(c), () =>
        failures.run([accountKey(user.username), accountKey(user.email)], () => deletion.delete(user.id, c.req.valid('json').password)),
      );
      return ok(c, null);
    })
    .post('/password/forgot', authLimit, resetEnabled, validate('json', forgotPasswordBody), async (c) => {
      await reset!.request(c.req.valid('json').email, sessionClient(c));
      return ok(c, null);
    })
    .post('/password/reset', authLimit, resetEnabled, validate('json', resetPasswordBody), async (c) => {
      const { email, code, new_password } = c.req.valid('json');
      await reset!.reset(email, code, new_password, sessionClient(c));
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
