// The relay's body validation: zValidator wrapped once, so every failure comes out as its VALIDATION_ERROR.
import { zValidator } from '@hono/zod-validator';
import type { Context } from 'hono';
import type { ZodType } from 'zod';
import { tooDeepAt } from '../../http/json-depth.js';
import { BOUNDS } from '../contract/bounds.js';
import { validationError, type ValidationIssue } from './errors.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Validates the JSON body against `schema`. A body that is not JSON (another Content-Type) is refused;
 * a request with no Content-Type and no body counts as `{}`, so `POST /routers` needs no body. A body
 * nested deeper than BOUNDS.bodyDepth is refused before the schema sees it, naming the path.
 * The depth check, then @hono/zod-validator's zValidator as it is, with a hook that turns its result
 * into the relay's answers.
 * @example routers.post('/', jsonBody(createRouterBody), (c) => c.json(c.req.valid('json')))
 */
export function jsonBody<T extends ZodType>(schema: T) {
  const validator = zValidator('json', schema, async (result, c) => {
    await requireJson(c);
    if (!result.success) throw validationError(result.error.issues.map(toIssue));
    const broken = unpairedSurrogateAt(result.data);
    if (broken !== undefined) throw validationError([{ path: broken, message: 'must be well-formed Unicode (an unpaired surrogate was found)' }]);
  });
  // Typed as the validator it hands on to, so the routes and `hc` see what zValidator gives them.
  const jsonBody: typeof validator = async function jsonBody(c, next) {
    await refuseDeepBody(c);
    return validator(c, next);
  };
  return jsonBody;
}

/**
 * Parses a JSON body (Hono caches it for the validator) and refuses one that nests too deep. A body
 * that does not parse is left to the validator, which answers it as malformed (Hono's 400).
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
/** Any surrogate at all: nearly every string has none, and this test is much cheaper than the one above. */
const ANY_SURROGATE = /[\ud800-\udfff]/;

function hasUnpairedSurrogate(text: string): boolean {
  return ANY_SURROGATE.test(text) && UNPAIRED_SURROGATE.test(text);
}

/** A node still to look at, with the key it sits under and its parent's frame: the path is built only for a hit. */
type Frame = [node: unknown, key: string, parent: Frame | undefined];

function pathOf(frame: Frame): string {
  const keys: string[] = [];
  for (let f: Frame | undefined = frame; f?.[2] !== undefined; f = f[2]) keys.push(f[1]);
  return keys.reverse().join('.');
}

/**
 * The dotted path of the first string or key holding an unpaired surrogate, if any. JSON may escape
 * one (`"\ud800"`), but the worker's parser cannot take it: mediasoup 3.11 then never answers the
 * request, which would hang for ever. Iterative, since a body may nest 100 000 levels deep.
 */
export function unpairedSurrogateAt(value: unknown): string | undefined {
  const stack: Frame[] = [[value, '', undefined]];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame[0];
    if (typeof node === 'string') {
      if (hasUnpairedSurrogate(node)) return pathOf(frame);
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      for (let i = 0; i < keys.length; i += 1) {
        const key = keys[i]!;
        const child: Frame = [(node as Record<string, unknown>)[key], key, frame];
        if (hasUnpairedSurrogate(key)) return pathOf(child);
        stack.push(child);
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
