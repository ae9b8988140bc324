// The relay's request checks, in its own error shape (VALIDATION_ERROR with details.issues): a
// middleware before a route's body is validated (JSON only, not too deep), and the hook that turns
// the validation of the route's schemas (@hono/zod-openapi, with zValidator) into the relay's answers.
import type { Hook } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { nestsAtMost, tooDeepAt } from '../../http/json-depth.js';
import type { AppEnv } from '../../http/env.js';
import { BOUNDS } from '../contract/bounds.js';
import { validationError, type ValidationIssue } from '../errors.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
/**
 * What @hono/zod-openapi's media-type gate (before a route's body validation) takes for JSON; a media
 * type JSON_MEDIA_TYPE accepts but this does not (`application/json;`, a space before `;`, a parameter
 * without a value) would get its 415, which is not an answer of the relay.
 */
const GATE_JSON_CONTENT_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * Before the validation of a route's body: a request whose body is not JSON (another Content-Type, or
 * a body without one) is refused; one with no Content-Type and no body goes on (the route's schema
 * then sees `{}`, so `POST /routers` needs no body); a JSON body nested deeper than BOUNDS.bodyDepth
 * is refused before any schema sees it, naming the path. A body that does not parse is left to the
 * validation, which answers it as malformed (Hono's 400).
 * @example app.openapi({ ...createTransport, middleware: jsonRequest }, handler)
 */
export const jsonRequest: MiddlewareHandler<AppEnv> = async function jsonRequest(c, next) {
  const contentType = c.req.header('Content-Type');
  const mediaType = contentType?.split(';')[0]?.trim() ?? '';
  if (JSON_MEDIA_TYPE.test(mediaType)) {
    await refuseDeepBody(c);
    if (!GATE_JSON_CONTENT_TYPE.test(contentType!)) throw notJson();
  } else if (contentType !== undefined || (await c.req.text()) !== '') {
    throw notJson();
  }
  await next();
};

/**
 * The hook of every relay route's validation: a failure is a VALIDATION_ERROR listing each issue's
 * path and message; a valid body holding an unpaired surrogate is refused too (see unpairedSurrogateAt).
 */
export const relayHook: Hook<unknown, AppEnv, string, void> = (result) => {
  if (!result.success) throw validationError(result.error.issues.map(toIssue));
  if (result.target !== 'json') return;
  const broken = unpairedSurrogateAt(result.data);
  if (broken !== undefined) throw validationError([{ path: broken, message: 'must be well-formed Unicode (an unpaired surrogate was found)' }]);
};

function notJson() {
  return validationError([{ path: '', message: 'Content-Type must be application/json' }], 'request body must be JSON');
}

/**
 * Refuses a JSON body that nests too deep. Its text (which Hono keeps for the validation) is scanned
 * first; only a body that may nest too deep is parsed here to find where, so a valid one is parsed
 * once, by the validation.
 */
async function refuseDeepBody(c: Context): Promise<void> {
  let body: unknown;
  try {
    const text = await c.req.text();
    if (nestsAtMost(text, BOUNDS.bodyDepth)) return;
    body = JSON.parse(text);
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

function toIssue(issue: { path: PropertyKey[]; message: string }): ValidationIssue {
  return { path: issue.path.map(String).join('.'), message: issue.message };
}
