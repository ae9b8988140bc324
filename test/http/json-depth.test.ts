// tooDeepAt (src/http/json-depth.ts) against a plain model of it: the same verdict and the same path
// (the last key at each level whose subtree nests too deep), for any JSON value; nestsAtMost, the
// check on the text, against tooDeepAt's verdict on the parsed text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsAtMost, tooDeepAt } from '../../src/http/json-depth.js';

/** The model: recursion over Object.keys in reverse, stopping at the first hit. */
function model(value: unknown, maxDepth: number, depth = 0): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= maxDepth) return [];
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i >= 0; i -= 1) {
    const found = model((value as Record<string, unknown>)[keys[i]!], maxDepth, depth + 1);
    if (found !== undefined) return [keys[i]!, ...found];
  }
  return undefined;
}

describe('tooDeepAt', () => {
  it('finds the path of a too-deep member, or none', () => {
    expect(tooDeepAt({ a: { b: [1] } }, 2)).toEqual(['a', 'b']);
    expect(tooDeepAt({ a: { b: [1] } }, 3)).toBeUndefined();
    expect(tooDeepAt([[[]], [[[]]]], 3)).toEqual(['1', '0', '0']);
    expect(tooDeepAt('text', 0)).toBeUndefined();
    expect(tooDeepAt(JSON.parse('{"__proto__":{"x":{}}}'), 2)).toEqual(['__proto__', 'x']);
  });

  it('agrees with the model on any JSON value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 6 }), (value, maxDepth) => {
        const parsed = JSON.parse(JSON.stringify(value)) as unknown;
        expect(tooDeepAt(parsed, maxDepth)).toEqual(model(parsed, maxDepth));
      }),
      { numRuns: 500 },
    );
  });

  it('walks a value nested 100 000 levels deep without deep recursion', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    expect(tooDeepAt(deep, 16)).toHaveLength(16);
  });
});

describe('nestsAtMost', () => {
  it('counts brackets outside strings only', () => {
    expect(nestsAtMost('{"a":{"b":[1]}}', 3)).toBe(true);
    expect(nestsAtMost('{"a":{"b":[1]}}', 2)).toBe(false);
    expect(nestsAtMost('[]', 1)).toBe(true);
    expect(nestsAtMost('[]', 0)).toBe(false);
    expect(nestsAtMost('"[[[["', 0)).toBe(true);
    // Escaped quotes and backslashes do not end a string early: the brackets after them are text.
    expect(nestsAtMost(String.raw`{"k":"\"[[[", "l":"\\"}`, 1)).toBe(true);
    expect(nestsAtMost(String.raw`{"k\"{{":"\\", "l":[[]]}`, 2)).toBe(false);
    expect(nestsAtMost(' \n{ "a" : [ { } ] }\t', 3)).toBe(true);
  });

  it('agrees with tooDeepAt on any JSON text (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 6 }), fc.boolean(), (value, maxDepth, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        expect(nestsAtMost(text, maxDepth)).toBe(tooDeepAt(JSON.parse(text), maxDepth) === undefined);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees on strings full of quotes, backslashes and brackets (property)', () => {
    // '\u0001' is written as the escape \u0001 in JSON: a backslash followed by more than one character.
    const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', '\u0001') });
    fc.assert(
      fc.property(fc.array(fc.tuple(tricky, tricky), { maxLength: 4 }), fc.integer({ min: 0, max: 3 }), (pairs, maxDepth) => {
        const text = JSON.stringify([Object.fromEntries(pairs.map(([k, v]) => [k, [v]]))]);
        expect(nestsAtMost(text, maxDepth)).toBe(tooDeepAt(JSON.parse(text), maxDepth) === undefined);
      }),
      { numRuns: 500 },
    );
  });

  it('scans a text nested 100 000 levels deep', () => {
    expect(nestsAtMost('['.repeat(100_000) + ']'.repeat(100_000), 16)).toBe(false);
  });
});
