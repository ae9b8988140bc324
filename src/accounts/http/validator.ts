// zValidator wrapped once, so every validation failure under /api is the envelope's 1001.
import { zValidator } from '@hono/zod-validator';
import type { ValidationTargets } from 'hono';
import type { z } from 'zod';
import { ApiCode, ApiError } from './envelope.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Validates one part of the request with a zod schema; on failure throws ApiError 1001 whose
 * message names the first invalid field, e.g. `username: 3-50 letters, digits or underscores`.
 * For `json`, a body that is not declared as JSON fails too (Hono would otherwise validate `{}`).
 * @example app.post('/login', validate('json', loginBody), (c) => c.req.valid('json'))
 */
export function validate<T extends z.ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) {
  return zValidator(target, schema, (result, c) => {
    if (target === 'json') {
      const mediaType = (c.req.header('content-type') ?? '').split(';')[0]!.trim();
      if (!JSON_MEDIA_TYPE.test(mediaType)) {
        throw new ApiError(ApiCode.INVALID_REQUEST, 'request body must be JSON (Content-Type: application/json)', 400);
      }
    }
    if (!result.success) {
      throw new ApiError(ApiCode.INVALID_REQUEST, describeIssue(result.error.issues[0]), 400);
    }
  });
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
