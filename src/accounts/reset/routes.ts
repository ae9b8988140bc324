// POST /password/forgot and /password/reset.
import type { MiddlewareHandler } from 'hono';
import { forgotPassword, resetPassword } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { ok } from '../shared/envelope.js';
import type { PasswordReset } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

/** `reset` absent (no mail configured): the endpoints answer 1004 whatever the body. */
export function resetRoutes(kit: RouteKit, reset: PasswordReset | undefined) {
  // Checked before the body is read.
  const resetEnabled: MiddlewareHandler = async function resetEnabled(_c, next) {
    if (!reset) throw new AuthError('mail_disabled');
    await next();
  };
  return createRouter()
    .openapi({ ...forgotPassword, middleware: [kit.authLimit, resetEnabled] }, async (c) => {
      await reset!.request(c.req.valid('json').email, kit.sessionClient(c));
      return ok(c, null);
    })
    .openapi({ ...resetPassword, middleware: [kit.authLimit, resetEnabled] }, async (c) => {
      const { email, code, new_password } = c.req.valid('json');
      await reset!.reset(email, code, new_password, kit.sessionClient(c));
      return ok(c, null);
    });
}
