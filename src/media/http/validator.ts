// The relay's body validation: every failure comes out as its VALIDATION_ERROR.
import { zValidator } from '@hono/zod-validator';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodType } from 'zod';
import { tooDeepAt } from '../../http/json-depth.js';
import { compileFastParse, NOT_SURE } from '../../http/zod-fast-path.js';
import { requestHeader } from '../../http/node-request.js';
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
  const check = async (result: ParseResult, c: Context, mayHoldSurrogates = true, isJson = false) => {
    if (!isJson) await requireJson(c);
    checkResult(result, mayHoldSurrogates);
  };
  // The types (what `hc` and the routes see) are those of zValidator with this hook; the middleware
  // that runs does the same steps in one layer of Hono's chain instead of three (a depth check, Hono's
  // validator and zValidator's wrapper), and parses with `safeParse`: every relay schema is
  // synchronous, and zod runs the object parsers it compiles once per schema (its JIT "fastpass") only
  // in synchronous parses, never in zValidator's `safeParseAsync`. Same issues, same data.
  const typed = zValidator('json', schema, check);
  // Accepts what zod would accept, at a fraction of its cost; anything else goes to zod (src/http/zod-fast-path.ts).
  const fast = compileFastParse(schema);
  const jsonBody = async function jsonBody(c: Context, next: () => Promise<void>) {
    let value: unknown = {};
    let mayHoldSurrogates = false;
    const contentType = requestHeader(c, 'content-type');
    const isJson = contentType !== undefined && JSON_MEDIA_TYPE.test(contentType.split(';')[0]!.trim());
    if (isJson) {
      try {
        const text = await c.req.text();
        mayHoldSurrogates = SURROGATE_ESCAPE.test(text);
        value = JSON.parse(text);
      } catch {
        // As Hono's validator answers a body that does not parse.
        throw new HTTPException(400, { message: 'Malformed JSON in request body' });
      }
      const deep = tooDeepAt(value, BOUNDS.bodyDepth);
      if (deep !== undefined) {
        throw validationError([{ path: deep.join('.'), message: `nests deeper than ${BOUNDS.bodyDepth} levels` }], 'request body nests too deep');
      }
    }
    const accepted = fast ? fast(value) : NOT_SURE;
    const result: ParseResult = accepted !== NOT_SURE ? { success: true, data: accepted } : schema.safeParse(value);
    // Awaited only for a body that is not JSON: an await is a promise and a turn more per relay call.
    if (!isJson) await requireJson(c);
    checkResult(result, mayHoldSurrogates);
    c.req.addValidatedData('json', result.data as object);
    await next();
  };
  return jsonBody as unknown as typeof typed;
}

type ParseResult = { success: true; data: unknown } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };

/** A failed parse is its VALIDATION_ERROR; so is an unpaired surrogate in what passed (looked for only when the text can hold one). */
function checkResult(result: ParseResult, mayHoldSurrogates: boolean): asserts result is { success: true; data: unknown } {
  if (!result.success) throw validationError(result.error.issues.map(toIssue));
  if (!mayHoldSurrogates) return;
  const broken = unpairedSurrogateAt(result.data);
  if (broken !== undefined) throw validationError([{ path: broken, message: 'must be well-formed Unicode (an unpaired surrogate was found)' }]);
}

/**
 * A surrogate escape (`\\uD800` to `\\uDFFF`) anywhere in the body text: the only way a JSON body can
 * carry an unpaired surrogate, since decoding the bytes as UTF-8 replaces any ill-formed sequence with
 * U+FFFD. When the text has none, the walk over the parsed body is skipped.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

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
