// GET /ice-servers: the session checked first, then the account's own budget.
import { getIceServers } from '../contract/ice-servers.js';
import { ok } from '../http/envelope.js';
import type { IceServersService } from '../service/ice-servers.service.js';
import { createRouter, type RouteKit } from './kit.js';

export function iceServersRoutes(kit: RouteKit, iceServers: IceServersService) {
  return createRouter().openapi({ ...getIceServers, middleware: [kit.requireSession, kit.iceServersLimit] }, (c) => ok(c, iceServers.forUser(c.var.auth)));
}
