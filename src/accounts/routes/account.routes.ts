// DELETE /account.
import { deleteAccount } from '../contract/account.js';
import { ok } from '../http/envelope.js';
import type { AccountService } from '../service/account.service.js';
import { createRouter, type RouteKit } from './kit.js';

export function accountRoutes(kit: RouteKit, account: AccountService) {
  return createRouter().openapi({ ...deleteAccount, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
    await account.delete(c.var.auth, c.req.valid('json').password, kit.sessionClient(c));
    return ok(c, null);
  });
}
