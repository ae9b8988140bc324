// GET and PUT /profile.
import { getProfile, updateProfile } from './contract.js';
import { ok } from '../shared/api-error.js';
import type { ProfileService } from './service.js';
import { profileView } from '../shared/views.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function profileRoutes(kit: RouteKit, profile: ProfileService) {
  return createRouter()
    .openapi({ ...getProfile, middleware: [kit.apiLimit, kit.requireSession] }, (c) => ok(c, profileView(c.var.auth.user)))
    .openapi({ ...updateProfile, middleware: [kit.apiLimit, kit.requireSession] }, async (c) => ok(c, profileView(await profile.update(c.var.auth, c.req.valid('json')))));
}
