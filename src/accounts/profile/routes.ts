// GET and PUT /profile: only the fields sent change.
import { getProfile, updateProfile } from './contract.js';
import { ok } from '../shared/envelope.js';
import type { Db } from '../../db/client.js';
import { updateProfile as storeProfile } from './update.js';
import { profileView } from './views.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function profileRoutes(kit: RouteKit, db: Db, now: () => Date) {
  return createRouter()
    .openapi({ ...getProfile, middleware: [kit.apiLimit, kit.requireSession] }, (c) => ok(c, profileView(c.var.auth.user)))
    .openapi({ ...updateProfile, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => {
      const { nickname, avatar, gender, phone } = c.req.valid('json');
      return ok(c, profileView(await storeProfile(db, now(), c.var.auth.user.id, { nickname, avatar, gender, phone })));
    });
}
