// OpenAPI 3.1 documents of both areas. Request bodies come from the very zod schemas that validate
// the requests (z.toJSONSchema); response shapes are described here with zod as well.
import type { DocumentPart } from '../http/module.js';
import { z } from 'zod';
import packageJson from '../../package.json' with { type: 'json' };
import { AUTH_EVENT_TYPES } from '../accounts/audit.js';
import { AUTH_EVENTS_MAX_LIMIT, authEventsQuery } from '../accounts/audit-routes.js';
import {
  changePasswordBody,
  deleteAccountBody,
  forgotPasswordBody,
  loginBody,
  logoutBody,
  refreshBody,
  registerBody,
  resetPasswordBody,
  updateProfileBody,
} from '../accounts/schemas.js';
import { ApiCode } from '../accounts/http/envelope.js';
import { eventStreamPath, eventWebhooks } from '../relay/events/openapi.js';
import { RELAY_COMMON, relayError, relayOperations } from '../relay/http/openapi.js';

type Method = 'get' | 'post' | 'put' | 'delete';

export interface Operation {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  body?: z.ZodType;
  /** Whether the body may be left out (logout's). */
  optionalBody?: boolean;
  /** Query parameters, from the schema that validates them. */
  query?: z.ZodObject;
  /** Success status and shape; `null` for an empty body (204). */
  success: { status: number; schema: z.ZodType | null; description: string };
  /** Error codes this operation can answer with, as [code, HTTP status, meaning]. */
  errors: Array<[string | number, number, string]>;
  security?: 'bearer' | 'internalToken';
  contentType?: string;
}

const timeString = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/).describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');

const tokenSet = z.object({
  token: z.string().describe('Access token; send as `Authorization: Bearer <token>`'),
  refresh_token: z.string().describe('Refresh token; single use, rotated by /refresh-token'),
  expires_in: z.int().describe('Access token lifetime in seconds'),
});
const sessionUser = z.object({
  id: z.int(),
  username: z.string(),
  email: z.string(),
  nickname: z.string(),
  avatar: z.string(),
  roles: z.array(z.string()),
});
const profile = sessionUser.extend({ gender: z.union([z.literal(0), z.literal(1), z.literal(2)]), phone: z.string(), created_at: timeString });

const deviceSession = z.object({
  id: z.string().describe('opaque session id (not a token)'),
  device: z.string().nullable().describe('User-Agent at login, trimmed, at most 200 characters'),
  ip: z.string().nullable().describe('client address at login, as used for rate limits'),
  created_at: timeString,
  last_used_at: timeString.describe('updated at most once a minute'),
  current: z.boolean().describe('the session of the access token of this request'),
});

const envelope = (data: z.ZodType) => z.object({ code: z.literal(0), message: z.literal('ok'), data });
const apiError = z.object({ code: z.int().describe('non-zero error code'), message: z.string(), data: z.null() });

const COMMON_API_ERRORS: Array<[number, number, string]> = [
  [ApiCode.INTERNAL, 500, 'internal error'],
  [ApiCode.RATE_LIMITED, 429, "too many requests (per client; on login and password change also too many failures for the account; on password forgot and reset also the client address's hourly reset budget); Retry-After is set"],
];
const INVALID: [number, number, string] = [ApiCode.INVALID_REQUEST, 400, 'a field fails its rule, malformed JSON, or a body over 64 KiB (413)'];
const UNAUTHENTICATED: [number, number, string] = [ApiCode.UNAUTHENTICATED, 401, 'access token missing, malformed, expired or revoked'];
const BUSY: [number, number, string] = [ApiCode.SERVER_BUSY, 503, 'too much password hashing queued; Retry-After is set, nothing was done'];

const accountOperations: Operation[] = [
  {
    method: 'post',
    path: '/api/v1/auth/register',
    summary: 'Register a user and open a session',
    body: registerBody,
    success: { status: 200, schema: envelope(tokenSet.extend({ user: sessionUser })), description: 'tokens and the new user' },
    errors: [INVALID, [ApiCode.USERNAME_TAKEN, 409, 'username already taken'], [ApiCode.EMAIL_TAKEN, 409, 'e-mail already registered'], BUSY],
  },
  {
    method: 'post',
    path: '/api/v1/auth/login',
    summary: 'Log in with a username or an e-mail address',
    body: loginBody,
    success: { status: 200, schema: envelope(tokenSet.extend({ user: sessionUser })), description: 'tokens and the user' },
    errors: [INVALID, [ApiCode.WRONG_PASSWORD, 401, 'wrong password'], [ApiCode.NO_SUCH_ACCOUNT, 401, 'no account with that username or e-mail'], BUSY],
  },
  {
    method: 'post',
    path: '/api/v1/auth/logout',
    summary: 'Log out: deletes the session of the access token (scope current, the default), every other session (others) or all of them (all)',
    description:
      'The body is optional. Only a JSON object with a `scope` member is read; without a body, or with any other body, the current session is ended, as before the scope existed.',
    security: 'bearer',
    body: logoutBody,
    optionalBody: true,
    success: { status: 200, schema: envelope(z.null()), description: 'sessions deleted; their access and refresh tokens are dead' },
    errors: [[ApiCode.INVALID_REQUEST, 400, 'scope is not one of current, others, all'], UNAUTHENTICATED],
  },
  {
    method: 'post',
    path: '/api/v1/auth/refresh-token',
    summary: 'Exchange a refresh token for a new token set (rotation; reuse revokes the session)',
    body: refreshBody,
    success: { status: 200, schema: envelope(tokenSet), description: 'a new token set' },
    errors: [INVALID, [ApiCode.UNAUTHENTICATED, 401, 'refresh token missing, malformed, expired, revoked or reused (reuse after the REFRESH_REUSE_GRACE_S grace period revokes the session)']],
  },
  {
    method: 'get',
    path: '/api/v1/auth/profile',
    summary: "Read the caller's profile",
    security: 'bearer',
    success: { status: 200, schema: envelope(profile), description: 'the profile' },
    errors: [UNAUTHENTICATED],
  },
  {
    method: 'put',
    path: '/api/v1/auth/profile',
    summary: "Update the caller's profile (only the fields sent)",
    security: 'bearer',
    body: updateProfileBody,
    success: { status: 200, schema: envelope(profile), description: 'the whole updated profile' },
    errors: [INVALID, UNAUTHENTICATED],
  },
  {
    method: 'put',
    path: '/api/v1/auth/password',
    summary: "Change the caller's password; other sessions are revoked",
    security: 'bearer',
    body: changePasswordBody,
    success: { status: 200, schema: envelope(z.null()), description: 'password changed' },
    errors: [INVALID, UNAUTHENTICATED, [ApiCode.WRONG_PASSWORD, 403, 'old_password is wrong'], BUSY],
  },
  {
    method: 'get',
    path: '/api/v1/auth/sessions',
    summary: "The caller's sessions (devices), newest first",
    security: 'bearer',
    success: { status: 200, schema: envelope(z.array(deviceSession)), description: 'the sessions' },
    errors: [UNAUTHENTICATED],
  },
  {
    method: 'delete',
    path: '/api/v1/auth/sessions/{id}',
    summary: "End one of the caller's sessions: its access and refresh tokens stop working at once",
    security: 'bearer',
    success: { status: 200, schema: envelope(z.null()), description: 'session ended' },
    errors: [UNAUTHENTICATED, [ApiCode.NOT_FOUND, 404, "no such session (another user's session answers the same)"]],
  },
  {
    method: 'delete',
    path: '/api/v1/auth/account',
    summary: "Delete the caller's account: every session ends, username and e-mail become free, personal data is removed",
    security: 'bearer',
    body: deleteAccountBody,
    success: { status: 200, schema: envelope(z.null()), description: 'account deleted' },
    errors: [INVALID, UNAUTHENTICATED, [ApiCode.WRONG_PASSWORD, 403, 'password is wrong']],
  },
  {
    method: 'post',
    path: '/api/v1/auth/password/forgot',
    summary: 'Mail a 6-digit reset code to a registered e-mail (the same answer, in the same time, for any e-mail)',
    body: forgotPasswordBody,
    success: { status: 200, schema: envelope(z.null()), description: 'accepted (whether or not the e-mail is registered)' },
    errors: [
      INVALID,
      [ApiCode.NOT_FOUND, 404, 'password reset is not available (production without SMTP_URL)'],
      [ApiCode.SERVER_BUSY, 503, 'the queue of codes to mail is full (decided before the address is looked up); Retry-After is set, nothing was issued'],
    ],
  },
  {
    method: 'post',
    path: '/api/v1/auth/password/reset',
    summary: 'Set a new password with a mailed code; every session ends',
    body: resetPasswordBody,
    success: { status: 200, schema: envelope(z.null()), description: 'password set' },
    errors: [
      [ApiCode.INVALID_REQUEST, 400, 'a field fails its rule, or new_password is too common or equals the username or e-mail'],
      [ApiCode.INVALID_RESET_CODE, 400, 'the code is wrong, used, revoked by a password change, expired (15 min) or out of tries; ask for a new one'],
      [ApiCode.NOT_FOUND, 404, 'password reset is not available (production without SMTP_URL)'],
    ],
  },
];

const healthOperations: Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: 200 while the process runs',
    success: { status: 200, schema: z.object({ status: z.literal('ok') }), description: 'alive' },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: the database answers, at least one media worker is alive and the relay is not draining (503 otherwise)',
    success: {
      status: 200,
      schema: z.object({ status: z.enum(['ready', 'not_ready']), checks: z.object({ database: z.string(), media: z.string(), relay: z.enum(['ok', 'draining']) }) }),
      description: 'ready (the same shape with status not_ready comes with 503)',
    },
    errors: [],
  },
];

const anyObject = z.record(z.string(), z.unknown());

// The audit trail's read endpoint (src/accounts/audit-routes.ts), served beside the relay.
const authEventsOperations: Operation[] = [
  {
    method: 'get',
    path: '/internal/v1/auth-events',
    summary: `Audit trail of authentication events, newest first (at most ${AUTH_EVENTS_MAX_LIMIT} a page; follow next_cursor)`,
    query: authEventsQuery,
    success: {
      status: 200,
      schema: z.object({
        events: z.array(
          z.object({
            id: z.int(),
            type: z.enum(AUTH_EVENT_TYPES),
            time: timeString,
            user_id: z.int().nullable(),
            session_id: z.string().nullable(),
            account: z.string().nullable().describe('login failures: the account as typed, trimmed and lower-cased'),
            detail: z.string().nullable().describe('failure reason, or who ended a session'),
            ip: z.string().nullable(),
            user_agent: z.string().nullable(),
          }),
        ),
        next_cursor: z.string().nullable(),
      }),
      description: 'a page of events',
    },
    errors: [['VALIDATION_ERROR', 400, 'a query parameter fails its rule, is unknown or repeated; details.issues']],
  },
];

const publicDocOperations: Operation[] = [
  {
    method: 'get',
    path: '/api/v1/openapi.json',
    summary: 'This document',
    success: { status: 200, schema: anyObject, description: 'OpenAPI 3.1 document' },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'Interactive documentation of the account API (HTML)',
    contentType: 'text/html',
    success: { status: 200, schema: z.string(), description: 'HTML page' },
    errors: [],
  },
];

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function buildDocument(
  info: { title: string; description: string },
  operations: Operation[],
  errorSchema: z.ZodType,
  securitySchemes: Record<string, unknown>,
  commonErrors: Array<[string | number, number, string]>,
) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const responses: Record<string, unknown> = {
      [op.success.status]: op.success.schema
        ? { description: op.success.description, content: { [op.contentType ?? 'application/json']: { schema: jsonSchema(op.success.schema, 'output') } } }
        : { description: op.success.description },
    };
    const errors = op.security || op.path.startsWith('/internal') ? [...op.errors, ...commonErrors] : [...op.errors, ...commonErrors.filter(([, s]) => s !== 401)];
    const byStatus = new Map<number, Array<[string | number, string]>>();
    for (const [code, status, meaning] of errors) byStatus.set(status, [...(byStatus.get(status) ?? []), [code, meaning]]);
    for (const [status, list] of byStatus) {
      responses[status] = {
        description: list.map(([code, meaning]) => `${code}: ${meaning}`).join('; '),
        content: { 'application/json': { schema: jsonSchema(errorSchema, 'output'), examples: Object.fromEntries(list.map(([code, meaning]) => [String(code), { value: { code, message: meaning, ...(typeof code === 'number' ? { data: null } : {}) } }])) } },
      };
    }
    const parameters: Array<Record<string, unknown>> = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (op.query) {
      const properties = (jsonSchema(op.query, 'input').properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const [name, schema] of Object.entries(properties)) parameters.push({ name, in: 'query', required: false, schema, ...(typeof schema.description === 'string' ? { description: schema.description } : {}) });
    }
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      summary: op.summary,
      operationId: `${op.method}${op.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, ch: string | undefined) => (ch ? ch.toUpperCase() : ''))}`,
      ...(parameters.length ? { parameters } : {}),
      ...(op.description ? { description: op.description } : {}),
      ...(op.body ? { requestBody: { required: !op.optionalBody, content: { 'application/json': { schema: jsonSchema(op.body, 'input') } } } } : {}),
      ...(op.security === 'bearer' ? { security: [{ bearer: [] }] } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: packageJson.version, description: info.description },
    paths,
    components: { securitySchemes },
    ...(Object.keys(securitySchemes).includes('internalToken') ? { security: [{ internalToken: [] }] } : {}),
  };
}

/** The public document: account API and health endpoints. */
export function accountApiDocument() {
  return buildDocument(
    {
      title: 'Chat backend: account API',
      description:
        'Every response is the envelope {code, message, data}; code 0 and message "ok" on success. Unknown routes answer 1004 (404, or 405 for a wrong method). Time values are yyyy-MM-dd HH:mm:ss in Asia/Shanghai.',
    },
    [...accountOperations, ...healthOperations, ...publicDocOperations],
    apiError,
    { bearer: { type: 'http', scheme: 'bearer', description: 'the access token from register, login or refresh-token' } },
    COMMON_API_ERRORS,
  );
}

/** The internal document: the media relay, info and metrics. Every path needs X-Internal-Token. */
export function relayApiDocument() {
  const doc = buildDocument(
    {
      title: 'Chat backend: internal media relay API',
      description:
        'For the signaling backend only. Every /internal/ path needs the X-Internal-Token header. Errors are {code, message, details?}.',
    },
    [...relayOperations, ...authEventsOperations],
    relayError,
    { internalToken: { type: 'apiKey', in: 'header', name: 'X-Internal-Token' } },
    RELAY_COMMON,
  );
  // The event stream and the webhook are described from the event schemas themselves (events/openapi.ts).
  Object.assign(doc.paths, eventStreamPath(jsonSchema(relayError, 'output')));
  return { ...doc, webhooks: eventWebhooks() };
}

/** A whole hand-kept document as the part of a module (until the routes generate their own). */
export function legacyDocumentPart(doc: { info: { title: string; description: string }; paths: Record<string, Record<string, unknown>>; components: { securitySchemes: Record<string, unknown> }; security?: Array<Record<string, string[]>>; webhooks?: Record<string, unknown> }): DocumentPart {
  return {
    info: { title: doc.info.title, description: doc.info.description },
    paths: doc.paths,
    securitySchemes: doc.components.securitySchemes,
    ...(doc.security ? { security: doc.security } : {}),
    ...(doc.webhooks ? { webhooks: doc.webhooks } : {}),
  };
}
