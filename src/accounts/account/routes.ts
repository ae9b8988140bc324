// DELETE /account.
import { deleteAccount } from './contract.js';
import { ok } from '../shared/api-error.js';
import type { AccountService } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function accountRoutes(kit: RouteKit, account: AccountService) {
  return createRouter().openapi({ ...deleteAccount, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
    await account.delete(c.var.auth, c.req.valid('json').password, kit.sessionClient(c));
    return ok(c, null);
  });
}
