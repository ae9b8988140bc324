// GET /internal/v1/users, GET /internal/v1/users/:id, POST and DELETE /internal/v1/users/:id/ban,
// DELETE /internal/v1/users/:id/mfa:
// behind the app's internal token guard, in the internal face's error shape.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ZodError } from 'zod';
import type { AppEnv } from '../../http/env.js';
import { InternalError, internalValidationError } from '../../http/internal-errors.js';
import { formatTime } from '../../time.js';
import { banUser, clearUserMfa, getUser, listUsers, unbanUser, USERS_DEFAULT_LIMIT, type OperatorUserView } from './contract.js';
import type { Moderation } from './service.js';
import { isBanned } from '../shared/bans.js';
import type { User } from '../types.js';
import { clearedFactorValues, userViewFieldValues } from '../vocabulary.js';

/** Each query parameter once, then its rule; failures as VALIDATION_ERROR with the issues. */
function hook(result: { success: boolean; error?: ZodError }, c: Context): void {
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length > 1) throw internalValidationError([{ path: name, message: 'may be given once' }], 'invalid query');
  }
  if (!result.success && result.error) {
    throw internalValidationError(
      result.error.issues.map((i) => ({
        path: i.code === 'unrecognized_keys' ? String(i.keys[0]) : i.path.map(String).join('.'),
        message: i.code === 'unrecognized_keys' ? 'not a parameter of this endpoint' : i.message,
      })),
    );
  }
}

function noSuchUser(id: number): InternalError {
  return new InternalError('NOT_FOUND', 404, `user not found: ${id}`, { resource: 'user', id: String(id) });
}

function operatorView(user: User, now: Date): OperatorUserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    ...userViewFieldValues(user),
    nickname: user.nickname,
    roles: [...user.roles],
    created_at: formatTime(user.createdAt),
    ban:
      user.bannedAt && isBanned(user, now)
        ? { since: formatTime(user.bannedAt), until: user.bannedUntil ? formatTime(user.bannedUntil) : null, reason: user.banReason }
        : null,
  };
}

const encodeCursor = (id: number) => Buffer.from(`u${id}`).toString('base64url');
function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined;
  const match = /^u([1-9][0-9]{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  return match ? Number(match[1]) : undefined;
}

/** @example app.route('/internal', moderationRoutes(moderation, now)) */
export function moderationRoutes(moderation: Moderation, now: () => Date) {
  return new OpenAPIHono<AppEnv>({ defaultHook: hook })
    .openapi(listUsers, async (c) => {
      const query = c.req.valid('query');
      let afterId: number | undefined;
      if (query.cursor !== undefined) {
        afterId = decodeCursor(query.cursor);
        if (afterId === undefined) throw internalValidationError([{ path: 'cursor', message: 'the next_cursor of a previous page' }], 'invalid query');
      }
      const limit = query.limit ?? USERS_DEFAULT_LIMIT;
      const rows = await moderation.users({ prefix: query.query, afterId, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const at = now();
      return c.json({ users: page.map((u) => operatorView(u, at)), next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.id) : null }, 200);
    })
    .openapi(getUser, async (c) => {
      const { id } = c.req.valid('param');
      const found = await moderation.user(id);
      if (!found) throw noSuchUser(id);
      const identities = found.identities.map((i) => ({ provider: i.provider, email: i.email, linked_at: formatTime(i.linkedAt), last_used_at: i.lastUsedAt ? formatTime(i.lastUsedAt) : null }));
      return c.json({ ...operatorView(found.user, now()), sessions: found.sessions, identities }, 200);
    })
    .openapi(banUser, async (c) => {
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      const until = body.until ?? null;
      if (until && until.getTime() <= now().getTime()) throw internalValidationError([{ path: 'until', message: 'must be in the future' }]);
      const user = await moderation.ban(id, until, body.reason ?? null);
      if (!user) throw noSuchUser(id);
      return c.json(operatorView(user, now()), 200);
    })
    .openapi(unbanUser, async (c) => {
      const { id } = c.req.valid('param');
      const user = await moderation.unban(id);
      if (!user) throw noSuchUser(id);
      return c.json(operatorView(user, now()), 200);
    })
    .openapi(clearUserMfa, async (c) => {
      const { id } = c.req.valid('param');
      const cleared = await moderation.clearMfa(id);
      if (!cleared) throw noSuchUser(id);
      return c.json({ user_id: id, ...clearedFactorValues(cleared.removed).answer }, 200);
    });
}
