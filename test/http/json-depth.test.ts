// tooDeepAt (src/http/json-depth.ts) against a plain model of it: the same verdict and the same path
// (the last key at each level whose subtree nests too deep), for any JSON value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tooDeepAt } from '../../src/http/json-depth.js';

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
