// Moderation for operators, behind the internal token, in the internal face's error shape: look users
// up, ban one (every session ends at once; login answers 2006 with `until`), lift the ban.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { timeString } from '../shared/contract.js';
import { CLEARED_FACTOR_FIELDS, OPERATOR_USER_FIELDS, secondFactorsSaid } from '../vocabulary.js';
import { hasNoControlCharacters, isStorableText, TEXT_RULE } from '../shared/fields.js';

export const USERS_MAX_LIMIT = 100;
export const USERS_DEFAULT_LIMIT = 20;
export const BAN_REASON_MAX = 200;
export const USER_QUERY_MAX = 254;

const SHANGHAI_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
/** The latest end a ban may name; without an end, a ban lasts until lifted. */
const UNTIL_MAX_MS = Date.UTC(9999, 11, 31, 15, 59, 59);

/** `yyyy-MM-dd HH:mm:ss` in Asia/Shanghai, as an instant; undefined when it is not one (2026-02-30 included). */
export function parseShanghaiTime(value: string): Date | undefined {
  const m = SHANGHAI_TIME.exec(value);
  if (!m) return undefined;
  const date = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}+08:00`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date rolls 02-30 over into March: the fields must read back as given.
  const back = new Date(date.getTime() + 8 * 3600_000);
  const same = back.getUTCFullYear() === Number(m[1]) && back.getUTCMonth() + 1 === Number(m[2]) && back.getUTCDate() === Number(m[3]) && back.getUTCHours() === Number(m[4]);
  return same && date.getTime() <= UNTIL_MAX_MS ? date : undefined;
}

export const userIdParam = z.object({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/, 'a positive integer')
    .transform(Number)
    .refine((n) => n <= 2_147_483_647, 'a positive integer'),
});

export const banBody = z.strictObject({
  until: z
    .string()
    .max(19, 'yyyy-MM-dd HH:mm:ss (Asia/Shanghai)')
    .transform((value, ctx) => {
      const date = parseShanghaiTime(value);
      if (!date) {
        ctx.addIssue({ code: 'custom', message: 'yyyy-MM-dd HH:mm:ss (Asia/Shanghai), a real date up to 9999-12-31 23:59:59' });
        return z.NEVER;
      }
      return date;
    })
    .optional()
    .describe('when the ban ends, yyyy-MM-dd HH:mm:ss (Asia/Shanghai), in the future; absent: until lifted'),
  reason: z.string().max(BAN_REASON_MAX).refine(hasNoControlCharacters, 'printable text').optional().describe('for operators; never shown to the user'),
});

export const usersQuery = z.strictObject({
  // Looked up in PostgreSQL, which cannot hold U+0000 (the query would fail: a 500 for a typo).
  query: z.string().max(USER_QUERY_MAX).refine(isStorableText, `query ${TEXT_RULE}`).optional().describe('username or e-mail prefix, case-insensitive'),
  cursor: z.string().max(40, 'the next_cursor of a previous page').optional(),
  limit: z
    .string()
    .regex(/^[0-9]{1,3}$/, `1-${USERS_MAX_LIMIT}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= USERS_MAX_LIMIT, `1-${USERS_MAX_LIMIT}`)
    .optional(),
});

const ban = z
  .strictObject({
    since: timeString,
    until: timeString.nullable().describe('null: until lifted'),
    reason: z.string().nullable(),
  })
  .nullable()
  .describe('the ban in force; null when the user is not banned (an ended ban reads null)');

export const operatorUser = z.strictObject({
  id: z.int(),
  username: z.string(),
  email: z.string(),
  ...OPERATOR_USER_FIELDS,
  nickname: z.string(),
  roles: z.array(z.string()),
  created_at: timeString,
  ban,
});

export const operatorUserDetail = operatorUser.extend({
  sessions: z.int().min(0).describe('live sessions'),
  identities: z
    .array(z.strictObject({ provider: z.string(), email: z.string().nullable(), linked_at: timeString, last_used_at: timeString.nullable() }))
    .describe('identities at sign-in providers (OpenID Connect) linked to the account, oldest first'),
});

export const usersPage = z.strictObject({ users: z.array(operatorUser), next_cursor: z.string().nullable() });

export type OperatorUserView = z.output<typeof operatorUser>;

/** The internal face's error body (src/http/internal-errors.ts answers it). */
const internalError = z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: internalError } } });
const VALIDATION = errorResponse('VALIDATION_ERROR: a parameter or the body fails its rule (details.issues)');
const NOT_FOUND = errorResponse('NOT_FOUND: no such user (details: resource, id)');

export const getUser = createRoute({
  tags: ['users'],
  method: 'get',
  path: '/v1/users/{id}',
  summary: 'A user, for operators: profile fields, the ban in force, live sessions, linked identities at sign-in providers',
  request: { params: userIdParam },
  responses: { 200: { description: 'the user', content: { 'application/json': { schema: operatorUserDetail } } }, 400: VALIDATION, 404: NOT_FOUND },
});

export const listUsers = createRoute({
  tags: ['users'],
  method: 'get',
  path: '/v1/users',
  summary: `Users by id, optionally those whose username or e-mail starts with query (at most ${USERS_MAX_LIMIT} a page; follow next_cursor)`,
  request: { query: usersQuery },
  responses: { 200: { description: 'a page of users', content: { 'application/json': { schema: usersPage } } }, 400: VALIDATION },
});

export const banUser = createRoute({
  tags: ['users'],
  method: 'post',
  path: '/v1/users/{id}/ban',
  summary: 'Ban a user: every session ends at once; login answers 2006 (403, data.until) once the password verified; refresh 1002',
  request: { params: userIdParam, body: { required: false, content: { 'application/json': { schema: banBody } } } },
  responses: { 200: { description: 'the user, banned', content: { 'application/json': { schema: operatorUser } } }, 400: VALIDATION, 404: NOT_FOUND },
});

export const mfaCleared = z.strictObject({ user_id: z.int(), ...CLEARED_FACTOR_FIELDS.answer });

export const clearUserMfa = createRoute({
  tags: ['users'],
  method: 'delete',
  path: '/v1/users/{id}/mfa',
  summary: `Remove every second factor of a user (${secondFactorsSaid('parts', ', ', 'lastFirst')}) once the person was verified by other means: audited (mfa_cleared), auth.user.mfa_cleared published, the owner mailed; the password and the sessions stay`,
  request: { params: userIdParam },
  responses: { 200: { description: 'what was removed', content: { 'application/json': { schema: mfaCleared } } }, 400: VALIDATION, 404: NOT_FOUND },
});

export const unbanUser = createRoute({
  tags: ['users'],
  method: 'delete',
  path: '/v1/users/{id}/ban',
  summary: 'Lift a ban (a user who is not banned stays so)',
  request: { params: userIdParam },
  responses: { 200: { description: 'the user, not banned', content: { 'application/json': { schema: operatorUser } } }, 400: VALIDATION, 404: NOT_FOUND },
});
