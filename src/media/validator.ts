// zValidator wrapped once so that every failure comes out as the relay's VALIDATION_ERROR.
import { zValidator } from '@hono/zod-validator';
import type { Context } from 'hono';
import type { ZodType } from 'zod';
import { validationError, type ValidationIssue } from './errors.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Validates the JSON body against `schema`. A body that is not JSON (another Content-Type) is refused;
 * a request with no Content-Type and no body counts as `{}`, so `POST /routers` needs no body.
 * @example routers.post('/', jsonBody(createRouterBody), (c) => c.json(c.req.valid('json')))
 */
export function jsonBody<T extends ZodType>(schema: T) {
  return zValidator('json', schema, async (result, c) => {
    await requireJson(c);
    if (!result.success) throw validationError(result.error.issues.map(toIssue));
  });
}

async function requireJson(c: Context): Promise<void> {
  const contentType = c.req.header('Content-Type');
  const mediaType = contentType?.split(';')[0]?.trim() ?? '';
  if (JSON_MEDIA_TYPE.test(mediaType)) return;
  if (contentType === undefined && (await c.req.text()) === '') return;
  throw validationError([{ path: '', message: 'Content-Type must be application/json' }], 'request body must be JSON');
}

function toIssue(issue: { path: PropertyKey[]; message: string }): ValidationIssue {
  return { path: issue.path.map(String).join('.'), message: issue.message };
}
