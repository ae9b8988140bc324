// GET /ice-servers: the session checked first, then the account's own budget.
import { getIceServers } from './contract.js';
import { ok } from '../shared/api-error.js';
import type { IceServersService } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function iceServersRoutes(kit: RouteKit, iceServers: IceServersService) {
  return createRouter().openapi({ ...getIceServers, middleware: [kit.requireSession, kit.iceServersLimit] }, (c) => ok(c, iceServers.forUser(c.var.auth)));
}
