// PUT /password.
import { changePassword } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { PasswordService } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function passwordRoutes(kit: RouteKit, passwords: PasswordService) {
  return createRouter().openapi({ ...changePassword, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
    const { old_password, new_password } = c.req.valid('json');
    await passwords.change(c.var.auth, old_password, new_password, kit.sessionClient(c));
    return ok(c, null);
  });
}
