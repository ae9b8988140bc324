// Sessions: register, log in, refresh the tokens, log out. Inputs, outputs and the routes.
import { z } from 'zod';
import type { ErrorRow } from '../shared/error-table.js';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';
import { characterCount, email, hasNoControlCharacters, isStorableText, nonEmpty, password, rule, RULES, TEXT_RULE, username } from '../shared/fields.js';

// ------------------------------------------------------------------ inputs

export const registerBody = z.object({
  username,
  email,
  password,
  /** Missing or empty: the username. */
  nickname: z
    .string(rule(RULES.nickname))
    .refine((value) => characterCount(value) <= 50, RULES.nickname)
    .refine(isStorableText, TEXT_RULE)
    .optional(),
});

export const loginBody = z.object({
  account: nonEmpty(RULES.account).max(254, RULES.account).refine(isStorableText, RULES.account).refine(hasNoControlCharacters, RULES.account),
  // Any non-empty string: a password that breaks the registration rules is simply wrong (2003).
  password: nonEmpty(RULES.required),
});

// Whatever the body holds, a missing or malformed refresh token is a token failure (1002), not a field error.
export const refreshBody = z.object({
  refresh_token: z.unknown().optional().transform((value) => (typeof value === 'string' ? value : '')),
});

export const LOGOUT_SCOPES = ['current', 'others', 'all'] as const;
/** Logout's optional body: only `scope` is read, and only when the body is a JSON object that has it. */
export const logoutScope = z.enum(LOGOUT_SCOPES, { error: 'one of "current", "others", "all"' });
export const logoutBody = z.object({ scope: logoutScope.optional() });

export type RegisterBody = z.infer<typeof registerBody>;
export type LoginBody = z.infer<typeof loginBody>;

// ------------------------------------------------------------------ outputs

export const tokenSet = z.strictObject({
  token: z.string().describe('Access token; send as `Authorization: Bearer <token>`'),
  refresh_token: z.string().describe('Refresh token; single use, rotated by /refresh-token'),
  expires_in: z.int().describe('Access token lifetime in seconds'),
});

/** The user inside a register or login answer. */
export const sessionUser = z.strictObject({
  id: z.int(),
  username: z.string(),
  email: z.string(),
  nickname: z.string(),
  avatar: z.string(),
  roles: z.array(z.string()),
});

export const session = tokenSet.extend({ user: sessionUser });

export type TokenSetView = z.output<typeof tokenSet>;
export type SessionUserView = z.output<typeof sessionUser>;
export type SessionView = z.output<typeof session>;

// ------------------------------------------------------------------ routes

export const register = accountRoute(
  {
    tags: ['session'],
    method: 'post',
    path: '/register',
    summary: 'Register a user and open a session',
    request: { body: { required: true, content: { 'application/json': { schema: registerBody } } } },
    responses: { 200: okResponse('tokens and the new user', session) },
  },
  ['invalid_request', 'username_taken', 'email_taken', 'server_busy'],
);

/** POST /login; `refusals`: what other features answer instead of a session after the right password (e.g. a second step). */
export const loginRoute = (refusals: readonly ErrorRow[]) =>
  accountRoute(
    {
      tags: ['session'],
      method: 'post',
      path: '/login',
      summary: 'Log in with a username or an e-mail address',
      request: { body: { required: true, content: { 'application/json': { schema: loginBody } } } },
      responses: { 200: okResponse('tokens and the user', session) },
    },
    ['invalid_request', 'wrong_password', 'no_such_account', 'account_banned', 'server_busy', ...refusals],
  );

export const logout = accountRoute(
  {
    tags: ['session'],
    method: 'post',
    path: '/logout',
    summary: 'Log out: deletes the session of the access token (scope current, the default), every other session (others) or all of them (all)',
    description:
      'The body is optional. Only a JSON object with a `scope` member is read; without a body, or with any other body, the current session is ended, as before the scope existed.',
    security: BEARER,
    // Described, not validated by the route: the handler reads the body leniently (see logoutScopeOf).
    request: { body: { required: false, content: { 'application/json': { schema: jsonSchemaOf(logoutBody) } } } },
    responses: { 200: okResponse('sessions deleted; their access and refresh tokens are dead', z.null()) },
  },
  [['invalid_request', 'scope is not one of current, others, all'], 'invalid_access_token'],
);

export const refreshToken = accountRoute(
  {
    tags: ['session'],
    method: 'post',
    path: '/refresh-token',
    summary: 'Exchange a refresh token for a new token set (rotation; reuse revokes the session)',
    request: { body: { required: true, content: { 'application/json': { schema: refreshBody } } } },
    responses: { 200: okResponse('a new token set', tokenSet) },
  },
  ['invalid_request', 'invalid_refresh_token'],
);

/** A schema as the document states it, for a body the route describes without validating. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return rest;
}
