// PUT /password, POST /password/forgot and /password/reset.
import type { MiddlewareHandler } from 'hono';
import { changePassword, forgotPassword, resetPassword } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { ok } from '../shared/api-error.js';
import type { PasswordService } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function passwordRoutes(kit: RouteKit, passwords: PasswordService) {
  // Without mail the reset endpoints do not exist (1004), whatever the body: checked before it is read.
  const resetEnabled: MiddlewareHandler = async function resetEnabled(_c, next) {
    if (!passwords.resetAvailable) throw new AuthError('mail_disabled');
    await next();
  };
  return createRouter()
    .openapi({ ...changePassword, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
      const { old_password, new_password } = c.req.valid('json');
      await passwords.change(c.var.auth, old_password, new_password, kit.sessionClient(c));
      return ok(c, null);
    })
    .openapi({ ...forgotPassword, middleware: [kit.authLimit, resetEnabled] }, async (c) => {
      await passwords.forgot(c.req.valid('json').email, kit.sessionClient(c));
      return ok(c, null);
    })
    .openapi({ ...resetPassword, middleware: [kit.authLimit, resetEnabled] }, async (c) => {
      const { email, code, new_password } = c.req.valid('json');
      await passwords.reset(email, code, new_password, kit.sessionClient(c));
      return ok(c, null);
    });
}
