// What every routes file of the account API shares, built once per module: the router (whose
// validation failures come out as the envelope's 1001), the rate limits, the session check and the
// client of a request as the services record it.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Config } from '../../config/index.js';
import type { AppEnv } from '../../http/env.js';
import { clientAddress, rateLimit } from '../../http/rate-limit.js';
import type { RateLimitStores } from '../../http/rate-limit-store.js';
import { headerText, printableText } from './fields.js';
import { AuthError } from './auth-error.js';
import type { AuthAction, AuthOutcomes } from './metrics.js';
import { answerOf } from './api-errors.js';
import { envelopeError } from './envelope.js';
import { apiValidationHook } from './validator.js';
import type { AuthService } from '../sessions/auth-service.js';
import type { Authenticated, SessionClient } from '../types.js';

export type AuthEnv = { Variables: AppEnv['Variables'] & { auth: Authenticated; arrivedAt: Date } };

/** One router per family, each answering a validation failure as the envelope's 1001. */
export function createRouter() {
  return new OpenAPIHono<AuthEnv>({ defaultHook: apiValidationHook });
}

export interface RouteKit {
  /** Register, login and the password reset: one counter per client. */
  authLimit: MiddlewareHandler;
  refreshLimit: MiddlewareHandler;
  /** Every authenticated endpoint. */
  apiLimit: MiddlewareHandler;
  /**
   * GET /ice-servers: its own budget, counted per account after requireSession (so a request without
   * a valid token answers 401 and spends nobody's budget, and users behind one address, as TURN's
   * users often are, do not share one), so a client polling TURN credentials cannot spend the API's.
   */
  iceServersLimit: MiddlewareHandler;
  /** `Authorization: Bearer <access token>`, checked; the caller in `c.var.auth`. */
  requireSession: MiddlewareHandler<AuthEnv>;
  /** Who sent the request, as sessions and the audit trail keep it. */
  sessionClient(c: Context): SessionClient;
  /** Counts the outcome of each request of the route (first of its middleware: rate-limited ones too). */
  countOutcome(action: AuthAction): MiddlewareHandler;
}

const BEARER = /^Bearer +(\S+) *$/i;

/** @example const kit = createRouteKit({ config, stores, services }) */
export function createRouteKit(deps: { config: Config; stores: RateLimitStores; services: { auth: Pick<AuthService, 'authenticate'> }; outcomes: AuthOutcomes }): RouteKit {
  const { config, stores, services, outcomes } = deps;
  const { trustProxy } = config.rateLimit;
  // One limiter (one counter per client) per budget: login and register share theirs.
  const tooMany = (c: Context) => envelopeError(c, answerOf(new AuthError('rate_limited')));
  return {
    authLimit: rateLimit({ tooMany, perMinute: config.rateLimit.authPerMin, trustProxy, store: stores.store('auth') }),
    refreshLimit: rateLimit({ tooMany, perMinute: config.rateLimit.refreshPerMin, trustProxy, store: stores.store('refresh') }),
    apiLimit: rateLimit({ tooMany, perMinute: config.rateLimit.apiPerMin, trustProxy, store: stores.store('api') }),
    iceServersLimit: rateLimit({
      tooMany,
      perMinute: config.iceServersPerMin,
      trustProxy,
      store: stores.store('ice-servers'),
      // Placed after requireSession, which has set the caller.
      keyOf: (c) => `user:${(c as Context<AuthEnv>).var.auth.user.id}`,
    }),
    requireSession: createMiddleware<AuthEnv>(async function requireSession(c, next) {
      const match = BEARER.exec(c.req.header('authorization') ?? '');
      if (!match) throw new AuthError('invalid_access_token', 'access token missing (Authorization: Bearer <token>)');
      c.set('auth', await services.auth.authenticate(match[1]!));
      await next();
    }),
    sessionClient: (c) => ({
      // A forwarding header can carry anything: printable text only, as the User-Agent.
      ip: printableText(clientAddress(c, trustProxy) ?? '').slice(0, 64) || undefined,
      // The device label: trimmed, at most 200 characters (code points, so no surrogate is cut in half).
      userAgent: deviceLabel(c.req.header('user-agent')),
    }),
    countOutcome: (action) => outcomes.counting(action),
  };
}

/** The User-Agent as stored and served (sessions' device, auth_events.user_agent): printable text only. */
function deviceLabel(userAgent: string | undefined): string | undefined {
  const trimmed = userAgent === undefined ? undefined : printableText(headerText(userAgent)).trim();
  if (!trimmed) return undefined;
  return trimmed.length <= 200 ? trimmed : Array.from(trimmed).slice(0, 200).join('');
}
