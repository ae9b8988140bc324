// GET /ice-servers: the session checked first, then the account's own budget.
import type { Config } from '../../config/index.js';
import { getIceServers } from './contract.js';
import { ok } from '../shared/envelope.js';
import { iceServersOf } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function iceServersRoutes(kit: RouteKit, turn: Config['turn'], now: () => Date) {
  return createRouter().openapi({ ...getIceServers, middleware: [kit.requireSession, kit.iceServersLimit] }, (c) => ok(c, iceServersOf(turn, c.var.auth, now())));
}
