// Hostile input for the fuzz tests: arbitrary JSON, wrong types, huge strings, deep nesting, unicode,
// duplicate keys, wrong content types, garbage headers and path ids; and the checks every answer must
// pass (the area's shape, a status that matches its code, never a 5xx).
import fc from 'fast-check';
import { expect } from 'vitest';
// The areas' error tables: the one place that says where they live (the statuses below read them).
import { ACCOUNT_ERRORS } from '../../../src/accounts/vocabulary.js';
import { RELAY_ERRORS } from '../../../src/relay/contract/errors.js';

/** Runs per endpoint; FUZZ_RUNS=5000 for a long run. */
export const FUZZ_RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? 200));
/** A fixed seed reproduces a run (fast-check prints the seed of a failure); unset: random. */
export const FUZZ_SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

export function fuzzParameters(runs = FUZZ_RUNS): fc.Parameters<unknown> {
  return { numRuns: runs, ...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }) };
}

/** What one fuzz file saw, printed at its end (and copied into docs/reliability.md). */
export class FuzzStats {
  cases = 0;
  readonly byStatus = new Map<number, number>();
  constructor(readonly area: string) {}
  record(status: number): void {
    this.cases += 1;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
  }
  get serverErrors(): number {
    return [...this.byStatus].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  }
  summary(): string {
    const statuses = [...this.byStatus].sort(([a], [b]) => a - b).map(([s, c]) => `${s}:${c}`).join(' ');
    return `FUZZ ${this.area} cases=${this.cases} 5xx=${this.serverErrors} statuses ${statuses}`;
  }
}

// ---------------------------------------------------------------- values

/** Strings that have broken parsers, databases and loggers before. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(8),
  '\ud800',
  'x\udfffy',
  '\u202eevil',
  '\ufeff',
  '\u200b',
  '🙂',
  '👩‍👩‍👧‍👦',
  'e\u0301',
  'İ',
  'ß',
  'ǅ',
  "' or 1=1 --",
  "'; drop table users; --",
  '"',
  '\\',
  '%00',
  '%s%s%n',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'toString',
  'null',
  'undefined',
  'NaN',
  '-0',
  '1e309',
  '\r\n\r\n',
  'A'.repeat(51),
  'A'.repeat(255),
  'x'.repeat(5000),
  '0'.repeat(20000),
];

export const nastyString = fc.constantFrom(...NASTY_STRINGS);

/** Any string: printable unicode, any code point, control characters, or a nasty one. */
export const anyString = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 60 }), weight: 2 },
  { arbitrary: nastyString, weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 500, maxLength: 3000 }), weight: 1 },
);

/** Characters that valid-looking text must not smuggle into a database or a log (NUL and lone surrogates most often). */
const hostileChar = fc.oneof(
  { arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff'), weight: 4 },
  { arbitrary: fc.constantFrom('\u202e', '\ufeff', '\u0008', '\u001b', '\u2028', '%00', '\\', "'", '"', '\u{1F600}'), weight: 2 },
);

function insertAt(value: string, at: number, ch: string): string {
  const i = value.length === 0 ? 0 : at % (value.length + 1);
  return `${value.slice(0, i)}${ch}${value.slice(i)}`;
}

/** A valid value with one hostile character slipped in somewhere (NUL, a lone surrogate, …). */
export function corrupted(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(valid, fc.nat(), hostileChar).map(([v, at, ch]) => insertAt(v, at, ch));
}

const nastyNumber = fc.constantFrom(0, -0, -1, 1, 2, 3, 0.5, -2147483649, 2147483648, 4294967296, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, 5e-324);

/** Any JSON value, unicode strings included, up to a small depth. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }), weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 2 },
  { arbitrary: anyString, weight: 3 },
  { arbitrary: nastyNumber, weight: 2 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': '' }), weight: 2 },
);

// ---------------------------------------------------------------- bodies

export interface RawBody {
  text: string | Uint8Array | undefined;
  note: string;
}

/** A body that fast-check prints short in a counterexample (its start and length, not 64 KiB of it). */
function body(text: RawBody['text'], note: string): RawBody {
  return {
    text,
    note,
    [fc.toStringMethod]: () => {
      const shown = text === undefined ? 'none' : typeof text === 'string' ? JSON.stringify(text.length > 300 ? `${text.slice(0, 300)}…` : text) : `<${text.length} bytes>`;
      return `{${note}, length ${text?.length ?? 0}: ${shown}}`;
    },
  } as RawBody;
}

type Path = (string | number)[];

function paths(value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [prefix];
  const own: Path[] = [prefix];
  for (const [key, child] of Object.entries(value)) own.push(...paths(child, [...prefix, Array.isArray(value) ? Number(key) : key]));
  return own;
}

type Action = 'corrupt' | 'nasty' | 'replace' | 'delete' | 'add' | 'long' | 'longArray' | 'deep';

/**
 * Deep nesting cannot be built as a value (JSON.stringify would overflow the test's own stack): a
 * marker string stands in for it and rawBody() writes the nesting into the text.
 */
const DEEP_MARKER = /"~fuzz-deep:(\d+):([[{])~"/g;

function deepMarker(depth: number, open: '[' | '{'): string {
  return `~fuzz-deep:${depth}:${open}~`;
}

/** The text with every deep-nesting marker replaced by that many levels of `[` or `{"a":`. */
/** The most characters the deep markers of one body expand to in all (an array of many copies of a deep value would otherwise exceed V8's longest string). */
const DEEP_EXPANSION_BUDGET = 4 * 1024 * 1024;

export function expandDeep(text: string): string {
  let budget = DEEP_EXPANSION_BUDGET;
  return text.replace(DEEP_MARKER, (_, depth: string, open: string) => {
    // `{"a":` is 5 characters a level: 40 000 of them still fit a 256 KiB body.
    const perLevel = open === '[' ? 2 : 6;
    const n = Math.max(0, Math.min(open === '[' ? Number(depth) : Math.min(Number(depth), 40_000), Math.floor(budget / perLevel)));
    budget -= n * perLevel;
    return open === '[' ? `${'['.repeat(n)}${']'.repeat(n)}` : `${'{"a":'.repeat(n)}0${'}'.repeat(n)}`;
  });
}

interface Oversize {
  length: number;
  filler: string;
  count: number;
  depth: number;
  open: '[' | '{';
}

/**
 * A field made too long, too many or too deep: a string grown to `length` (its own start kept, so a
 * scalabilityMode stays `L1T3…` and a mimeType `audio/…`), an array of `count` copies of the value,
 * or nesting `depth` levels deep in its place.
 */
function oversized(action: Action, current: unknown, o: Oversize): unknown {
  if (action === 'long') return typeof current === 'string' ? `${current}${o.filler.repeat(o.length)}` : o.filler.repeat(o.length);
  if (action === 'longArray') {
    const item = Array.isArray(current) ? (current[0] ?? null) : current;
    // A second step may repeat what the first made long (2 000 copies of a 200 000-character string
    // are past what a JS string holds): copies up to 4 MB of JSON, 16 times any body limit. Copies, not
    // one object many times: a second step that lengthens a string in one of them (structuredClone
    // keeps shared references) would lengthen it in all, and the body would grow to 200 MB.
    const itemBytes = JSON.stringify(item)?.length ?? 4;
    return Array.from({ length: Math.max(1, Math.min(o.count, Math.floor(4_000_000 / itemBytes))) }, () => (item !== null && typeof item === 'object' ? structuredClone(item) : item));
  }
  return deepMarker(o.depth, o.open);
}

function setAt(root: unknown, path: Path, action: Action, value: unknown, at: number, ch: string, o?: Oversize): unknown {
  const current = path.reduce<any>((node, key) => node?.[key], root);
  const replacement =
    action === 'long' || action === 'longArray' || action === 'deep'
      ? oversized(action, current, o!)
      : action === 'corrupt'
        ? typeof current === 'string'
          ? insertAt(current, at, ch)
          : value
        : action === 'add' || action === 'delete'
          ? undefined
          : value;
  if (path.length === 0) return action === 'delete' ? undefined : action === 'add' ? root : replacement;
  const copy: any = structuredClone(root);
  let node = copy;
  for (const key of path.slice(0, -1)) {
    node = node[key];
    // A path through a key structuredClone does not carry (an own `__proto__` that anyJson made):
    // nothing to change there, the body goes as it is.
    if (node === null || typeof node !== 'object') return copy;
  }
  const last = path.at(-1)!;
  if (action === 'delete') {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else if (action === 'add') {
    if (node[last] !== null && typeof node[last] === 'object') {
      if (Array.isArray(node[last])) node[last].push(value);
      else node[last][`extra_${String(value).slice(0, 8)}`] = value;
    } else node[`extra_${String(last)}`] = value;
  } else {
    node[last] = replacement;
  }
  return copy;
}

const oversize: fc.Arbitrary<Oversize> = fc.record({
  // Up to 200 000 characters: a body stays under the relay's 256 KiB limit and reaches the schema.
  length: fc.constantFrom(100, 300, 2_000, 20_000, 200_000),
  filler: fc.constantFrom('x', 'a', '0', '/', ' ', 'é', '\\'),
  count: fc.constantFrom(20, 100, 500, 2_000),
  depth: fc.constantFrom(17, 100, 5_000, 100_000),
  open: fc.constantFrom<'[' | '{'>('[', '{'),
});

/**
 * A valid body with one or two parts broken: a field (at any depth, leaves most often) given a
 * hostile character, replaced by a nasty string or any JSON value, deleted, or given a sibling.
 * With `oversized`, also made very long (a string leaf), very many (an array) or very deep (any
 * field); `oversized: 'only'` does nothing else.
 */
export function mutated(valid: () => unknown, options: { oversized?: boolean | 'only' } = {}): fc.Arbitrary<unknown> {
  const big = { arbitrary: fc.constantFrom<Action>('long', 'longArray', 'deep'), weight: 4 };
  const action =
    options.oversized === 'only'
      ? big.arbitrary
      : fc.oneof(
          { arbitrary: fc.constant<Action>('corrupt'), weight: 4 },
          { arbitrary: fc.constant<Action>('nasty'), weight: 2 },
          { arbitrary: fc.constant<Action>('replace'), weight: 2 },
          { arbitrary: fc.constantFrom<Action>('delete', 'add'), weight: 2 },
          ...(options.oversized ? [big] : []),
        );
  const step = fc.record({ leaf: fc.boolean(), at: fc.nat(), action, value: anyJson, nasty: nastyString, pos: fc.nat(), ch: hostileChar, size: oversize });
  return fc.array(step, { minLength: 1, maxLength: options.oversized === 'only' ? 1 : 2 }).map((steps) => {
    let body = valid();
    for (const s of steps) {
      const all = paths(body);
      const valueAt = (p: Path) => p.reduce<any>((node, key) => node?.[key], body);
      const leaves = all.filter((p) => {
        const v = valueAt(p);
        return v === null || typeof v !== 'object';
      });
      const targets =
        s.action === 'long'
          ? all.filter((p) => typeof valueAt(p) === 'string')
          : s.action === 'longArray'
            ? all.filter((p) => Array.isArray(valueAt(p)))
            : s.leaf
              ? leaves
              : all;
      const pool = targets.length > 0 ? targets : all;
      body = setAt(body, pool[s.at % pool.length]!, s.action, s.action === 'nasty' ? s.nasty : s.value, s.pos, s.ch, s.size);
    }
    return body;
  });
}

/** A body as sent on the wire: JSON of a value, or something that is not (quite) JSON. */
export function rawBody(value: fc.Arbitrary<unknown>, limitBytes: number): fc.Arbitrary<RawBody> {
  const json = value.map((v) => body(v === undefined ? undefined : expandDeep(JSON.stringify(v)), 'json'));
  const duplicateKeys = fc.tuple(value, fc.string({ unit: 'grapheme-ascii', maxLength: 12 }), anyJson).map(([v, key, other]) => {
    const text = expandDeep(JSON.stringify(v) ?? 'null');
    if (!text.startsWith('{') || text === '{}') return body(`{"${key}":1,"${key}":${JSON.stringify(other)}}`, 'duplicate keys');
    const firstKey = Object.keys(v as object)[0]!;
    return body(`{${JSON.stringify(firstKey)}:${JSON.stringify(other)},${text.slice(1)}`, 'duplicate keys');
  });
  const deep = fc.tuple(fc.integer({ min: 100, max: Math.floor(limitBytes / 2) - 10 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) => 
    body(open === '[' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(Math.floor(depth / 5))}1${'}'.repeat(Math.floor(depth / 5))}`, 'deep nesting'),
  );
  const garbage = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), nastyString, fc.constantFrom('{', '}', '{"a":}', '[1,]', "{'a':1}", '{"a":1}}', 'nul', 'tru', '1e', '"\\u12"', '\u0000{}')).map((text) => body(text, 'not JSON'));
  const bytes = fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => body(Uint8Array.from([0xff, 0xfe, ...b]), 'invalid UTF-8'));
  const huge = fc.tuple(fc.integer({ min: 1, max: 4096 }), fc.boolean()).map(([over, json]) => {
    const size = limitBytes + over;
    return body(json ? JSON.stringify({ pad: 'x'.repeat(size) }) : 'y'.repeat(size), 'over the limit');
  });
  const nearLimit = fc.integer({ min: 0, max: 64 }).map((under) => body(JSON.stringify({ pad: 'z'.repeat(limitBytes - 12 - under) }), 'at the limit'));
  return fc.oneof(
    { arbitrary: json, weight: 10 },
    { arbitrary: duplicateKeys, weight: 2 },
    { arbitrary: deep, weight: 1 },
    { arbitrary: garbage, weight: 3 },
    { arbitrary: bytes, weight: 1 },
    { arbitrary: huge, weight: 1 },
    { arbitrary: nearLimit, weight: 1 },
    { arbitrary: fc.constant(body(undefined, 'no body')), weight: 1 },
  );
}

/** Mostly JSON, sometimes something else or nothing. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json;charset=latin1',
      'application/vnd.api+json',
      'application/problem+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=----x',
      'application/jsonx',
      'application/json, text/plain',
      '*/*',
      '',
      ';',
    ),
    weight: 4,
  },
  { arbitrary: headerValueOf(200), weight: 1 },
);

// ---------------------------------------------------------------- headers, tokens, paths

/** A value Headers accepts (Latin-1, no NUL, CR or LF) but otherwise anything, up to 8 KiB. */
export function headerValueOf(maxLength: number): fc.Arbitrary<string> {
  return fc
    .oneof(fc.string({ unit: 'binary-ascii', maxLength }), fc.string({ unit: 'grapheme-ascii', minLength: maxLength / 2, maxLength }))
    .map((s) => s.replace(/[\0\r\n]/g, '').trim());
}

/** `Authorization` values: missing, other schemes, malformed, oversized, or (when given) a real token. */
export function authorization(validToken?: () => string | undefined): fc.Arbitrary<string | undefined> {
  const options: fc.Arbitrary<string | undefined>[] = [
    fc.constantFrom(undefined, '', 'Bearer', 'Bearer ', 'bearer  ', 'Basic dXNlcjpwYXNz', 'Token abc', 'Bearer null', 'Bearer undefined'),
    headerValueOf(100).map((v) => `Bearer ${v}`),
    headerValueOf(8000).map((v) => `Bearer ${v}`),
    fc.tuple(fc.stringMatching(/^[A-Za-z0-9_-]{22}$/), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)).map(([id, secret]) => `Bearer ${id}.${secret}`),
    headerValueOf(200),
  ];
  if (validToken) {
    options.push(fc.constant(null).map(() => validToken()).map((t) => (t === undefined ? undefined : `Bearer ${t}`)));
    options.push(
      fc.tuple(fc.constant(null).map(() => validToken()), fc.nat(), fc.constantFrom('A', '-', '_', '.', '=')).map(([t, at, ch]) => {
        if (t === undefined) return undefined;
        const i = at % t.length;
        return `Bearer ${t.slice(0, i)}${ch}${t.slice(i + 1)}`;
      }),
    );
  }
  return fc.oneof(...options);
}

/** A path segment that is not an id: percent-encoded arbitrary text, or raw troublemakers. */
export const notAnId: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid(),
  fc.constantFrom('..', '.', '%2e%2e', '%2F', '%00', '%zz', '%', '~', ';', '@', '!', "'", '0', '-1', 'null', 'undefined', '__proto__', 'constructor', 'x'.repeat(3000), ' '),
);

// ---------------------------------------------------------------- checks

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

export async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** Each code's statuses in a table of rows: every status a row with that code answers with. */
function statusesByCode<C extends string | number>(rows: Iterable<{ code: C; status: number }>): Record<C, number[]> {
  const byCode = {} as Record<C, number[]>;
  for (const { code, status } of rows) byCode[code] = [...new Set([...(byCode[code] ?? []), status])].sort();
  return byCode;
}

/** The account envelope's codes and their statuses, from the account error table; 0 is success. */
const API_STATUS: Record<number, number[]> = { 0: [200], ...statusesByCode(Object.values(ACCOUNT_ERRORS)) };

/** An /api answer: the envelope, a known code whose status matches, one of `codes`, never a 5xx. */
export function expectApiAnswer(a: Answer, codes: number[], what: string): void {
  const context = `${what} → ${a.status} ${a.text.slice(0, 300)}`;
  expect(a.status, context).toBeLessThan(500);
  expect(a.headers.get('content-type'), context).toMatch(/^application\/json/);
  const body = a.body as { code: number; message: string; data: unknown };
  expect(body !== null && typeof body === 'object' && Object.keys(body).sort().join(), context).toBe('code,data,message');
  expect(API_STATUS[body.code], context).toContain(a.status);
  // Any endpoint answers 1004 for a wrong method and 1001 (413) for an oversized body.
  expect([...codes, 1004, ...(a.status === 413 ? [1001] : [])], context).toContain(body.code);
  expect(typeof body.message === 'string' && body.message.length > 0, context).toBe(true);
  if (body.code === 0) expect(body.message, context).toBe('ok');
  else expect(body.data, context).toBeNull();
  if (a.status === 405) expect(a.headers.get('allow'), context).toBeTruthy();
  // hono/secure-headers on every /api answer, errors included.
  expect(a.headers.get('x-content-type-options'), context).toBe('nosniff');
}

/**
 * The relay's codes and their statuses, from the relay error table; the body limit answers 413 with
 * VALIDATION_ERROR before any route (each operation's document states it).
 */
const RELAY_STATUS: Record<string, number[]> = statusesByCode(Object.entries(RELAY_ERRORS).map(([code, row]) => ({ code, status: row.status })));
RELAY_STATUS.VALIDATION_ERROR!.push(413);

/** An /internal error: `{code, message, details?}`, a known code whose status matches, one of `codes`. */
export function expectRelayAnswer(a: Answer, success: number, codes: string[], what: string): void {
  const context = `${what} → ${a.status} ${a.text.slice(0, 300)}`;
  expect(a.status, context).toBeLessThan(500);
  if (a.status === success) return;
  expect(a.headers.get('content-type'), context).toMatch(/^application\/json/);
  const body = a.body as { code: string; message: string; details?: unknown };
  expect(body !== null && typeof body === 'object', context).toBe(true);
  const keys = Object.keys(body);
  expect(keys.every((k) => ['code', 'message', 'details'].includes(k)) && keys.includes('code') && keys.includes('message'), context).toBe(true);
  expect(RELAY_STATUS[body.code], context).toContain(a.status);
  expect([...codes, 'UNAUTHORIZED', ...(a.status === 413 ? ['VALIDATION_ERROR'] : [])], context).toContain(body.code);
  if ('details' in body) expect(typeof body.details === 'object' && body.details !== null, context).toBe(true);
  expect(a.headers.get('access-control-allow-origin'), context).toBeNull();
}

/** A request init from the fuzzed parts; the body goes as given (string or bytes). */
export function requestInit(method: string, headers: Record<string, string | undefined>, body: RawBody['text']): RequestInit {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) clean[name] = value;
  return { method, headers: clean, ...(body === undefined || method === 'GET' ? {} : { body }) };
}
