// zValidator wrapped once so that every failure comes out as the relay's VALIDATION_ERROR.
import { zValidator } from '@hono/zod-validator';
import type { Context } from 'hono';
import type { ZodType } from 'zod';
import { tooDeepAt } from '../../http/json-depth.js';
import { BOUNDS } from './bounds.js';
import { validationError, type ValidationIssue } from './errors.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Validates the JSON body against `schema`. A body that is not JSON (another Content-Type) is refused;
 * a request with no Content-Type and no body counts as `{}`, so `POST /routers` needs no body. A body
 * nested deeper than BOUNDS.bodyDepth is refused before the schema sees it, naming the path.
 * @example routers.post('/', jsonBody(createRouterBody), (c) => c.json(c.req.valid('json')))
 */
export function jsonBody<T extends ZodType>(schema: T) {
  const validator = zValidator('json', schema, async (result, c) => {
    await requireJson(c);
    if (!result.success) throw validationError(result.error.issues.map(toIssue));
    const broken = unpairedSurrogateAt(result.data);
    if (broken !== undefined) throw validationError([{ path: broken, message: 'must be well-formed Unicode (an unpaired surrogate was found)' }]);
  });
  const bodyDepth: typeof validator = async function bodyDepth(c, next) {
    await refuseDeepBody(c);
    return validator(c, next);
  };
  return bodyDepth;
}

/**
 * Parses a JSON body (Hono caches it for the validator) and refuses one that nests too deep. A body
 * that does not parse is left to the validator, which answers it as malformed.
 */
async function refuseDeepBody(c: Context): Promise<void> {
  const mediaType = c.req.header('Content-Type')?.split(';')[0]?.trim() ?? '';
  if (!JSON_MEDIA_TYPE.test(mediaType)) return;
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return;
  }
  const deep = tooDeepAt(body, BOUNDS.bodyDepth);
  if (deep !== undefined) {
    throw validationError([{ path: deep.join('.'), message: `nests deeper than ${BOUNDS.bodyDepth} levels` }], 'request body nests too deep');
  }
}

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The dotted path of the first string or key holding an unpaired surrogate, if any. JSON may escape
 * one (`"\ud800"`), but the worker's parser cannot take it: mediasoup 3.11 then never answers the
 * request, which would hang for ever. Iterative, since a body may nest 100 000 levels deep.
 */
export function unpairedSurrogateAt(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (UNPAIRED_SURROGATE.test(node)) return path;
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        const childPath = path === '' ? key : `${path}.${key}`;
        if (UNPAIRED_SURROGATE.test(key)) return childPath;
        stack.push([child, childPath]);
      }
    }
  }
  return undefined;
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
