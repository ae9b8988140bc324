// DELETE /account.
import { deleteAccount } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { AccountDeletion } from './deletion.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function accountRoutes(kit: RouteKit, deletion: AccountDeletion) {
  return createRouter().openapi({ ...deleteAccount, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
    await deletion.deleteConfirmed(c.var.auth, c.req.valid('json').password, kit.sessionClient(c));
    return ok(c, null);
  });
}
