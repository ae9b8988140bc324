// memoizeMember (src/media/http/memo.ts): one member of a body validated once per distinct value, the
// rest of the body every time; only values that passed are remembered, within bounds.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { memoizeMember } from '../../src/media/http/memo.js';

/** A body schema whose `caps` member counts how often it is checked. */
function counted() {
  const counter = { calls: 0 };
  const caps = z
    .object({ codecs: z.array(z.object({ mimeType: z.string().max(20) })).min(1) })
    .refine(() => ++counter.calls > 0);
  return { counter, schema: z.object({ id: z.string().max(8), caps }) };
}
const caps = (mimeType = 'audio/opus') => ({ codecs: [{ mimeType }] });

describe('memoizeMember', () => {
  it('checks a value it saw pass only once, and the other members every time', async () => {
    const { counter, schema } = counted();
    const memo = memoizeMember(schema, 'caps');
    const first = memo.parse({ id: 'a', caps: caps() });
    const again = memo.parse({ id: 'b', caps: caps() });
    expect(first).toMatchObject({ success: true, data: { id: 'a', caps: caps() } });
    expect(again).toMatchObject({ success: true, data: { id: 'b', caps: caps() } });
    expect(counter.calls).toBe(1);
    expect(memo.size()).toBe(1);
    // The other members are still checked when the remembered value comes again.
    const bad = memo.parse({ id: 'x'.repeat(9), caps: caps() });
    expect(bad.success).toBe(false);
    expect(!bad.success && bad.error.issues.map((i) => i.path.join('.'))).toEqual(['id']);
    expect(counter.calls).toBe(1);
  });

  it('hands every request its own object: the value as sent, or a fresh copy of its stripped form', () => {
    const { schema } = counted();
    const memo = memoizeMember(schema, 'caps');
    const sent = caps();
    memo.parse({ id: 'a', caps: caps() });
    const hit = memo.parse({ id: 'b', caps: sent });
    expect(hit.success && (hit.data as any).caps).toBe(sent);

    const extra = { ...caps('audio/PCMU'), junk: 'x' };
    const one = memo.parse({ id: 'c', caps: extra });
    const two = memo.parse({ id: 'd', caps: { ...extra } });
    for (const result of [one, two]) expect(result).toEqual({ success: true, data: { id: expect.any(String), caps: caps('audio/PCMU') } });
    expect((one as any).data.caps).not.toBe((two as any).data.caps);
    (two as any).data.caps.codecs[0].mimeType = 'changed by the engine';
    expect(memo.parse({ id: 'e', caps: { ...extra } })).toMatchObject({ data: { caps: caps('audio/PCMU') } });
  });

  it('never remembers a value that failed, nor one longer than the limit', () => {
    const { counter, schema } = counted();
    const memo = memoizeMember(schema, 'caps', { maxTextLength: 100 });
    const wrong = caps('x'.repeat(21));
    expect(memo.parse({ id: 'a', caps: wrong }).success).toBe(false);
    expect(memo.parse({ id: 'a', caps: wrong }).success).toBe(false);
    expect(memo.size()).toBe(0);
    expect(counter.calls).toBe(2); // checked both times
    const long = { codecs: Array.from({ length: 10 }, () => ({ mimeType: 'audio/opus' })) };
    expect(memo.parse({ id: 'a', caps: long }).success).toBe(true);
    expect(memo.parse({ id: 'a', caps: long }).success).toBe(true);
    expect(memo.size()).toBe(0);
    expect(counter.calls).toBe(4); // the long one, checked both times too
  });

  it('keeps at most maxEntries values, dropping the least recently seen', () => {
    const { counter, schema } = counted();
    const memo = memoizeMember(schema, 'caps', { maxEntries: 3 });
    for (const codec of ['a/1', 'a/2', 'a/3']) memo.parse({ id: 'x', caps: caps(codec) });
    memo.parse({ id: 'x', caps: caps('a/1') }); // seen again: now the most recent
    memo.parse({ id: 'x', caps: caps('a/4') }); // drops a/2
    expect(memo.size()).toBe(3);
    const before = counter.calls;
    memo.parse({ id: 'x', caps: caps('a/1') });
    expect(counter.calls).toBe(before);
    memo.parse({ id: 'x', caps: caps('a/2') });
    expect(counter.calls).toBe(before + 1);
  });

  it('validates bodies without the member, or with a member that is no object, as the schema does', () => {
    const { schema } = counted();
    const memo = memoizeMember(schema, 'caps');
    for (const body of [null, [], 'text', { id: 'a' }, { id: 'a', caps: 'x' }, { id: 'a', caps: null }]) {
      expect(memo.parse(body)).toEqual(schema.safeParse(body));
    }
    expect(memo.size()).toBe(0);
    expect(() => memoizeMember(schema, 'nope')).toThrow(/no member nope/);
  });
});
