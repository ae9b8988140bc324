// GET /sessions, DELETE /sessions/{id}.
import { endSession, listSessions } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { SessionDirectory } from './directory.js';
import { deviceSessionView } from './views.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function devicesRoutes(kit: RouteKit, devices: SessionDirectory) {
  return createRouter()
    .openapi({ ...listSessions, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => ok(c, (await devices.list(c.var.auth.user.id, c.var.auth.sessionId)).map(deviceSessionView)))
    .openapi({ ...endSession, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
      await devices.endOwn(c.var.auth, c.req.valid('param').id, kit.sessionClient(c));
      return ok(c, null);
    });
}
