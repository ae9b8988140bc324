// The routes' validation (zValidator inside @hono/zod-openapi) answered once, as the envelope's
// 1001 whose message names the first invalid field, e.g. `username: 3-50 letters, digits or underscores`.
import type { Context, ValidationTargets } from 'hono';
import { AuthError } from './auth-error.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * The routers' defaultHook. For `json`, a body that is not declared as JSON fails too (Hono would
 * otherwise validate `{}`), whether or not `{}` passes the schema.
 * @example new OpenAPIHono({ defaultHook: apiValidationHook })
 */
export function apiValidationHook(result: { target: keyof ValidationTargets; success: boolean; error?: { issues: readonly IssueLike[] } }, c: Context): void {
  if (result.target === 'json') {
    const mediaType = (c.req.header('content-type') ?? '').split(';')[0]!.trim();
    if (!JSON_MEDIA_TYPE.test(mediaType)) throw new AuthError('not_json');
  }
  if (!result.success) throw new AuthError('invalid_request', describeIssue(result.error?.issues[0]));
}

interface IssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/** `field: rule` for the first issue; the field is a dotted path into the body. */
export function describeIssue(issue: IssueLike | undefined): string {
  if (!issue) return 'request: invalid';
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    const key = field ? `${field}.${issue.keys[0]}` : issue.keys[0];
    return `${key}: is not a field that can be sent here`;
  }
  if (!field) return 'body: must be a JSON object';
  return `${field}: ${issue.message}`;
}
