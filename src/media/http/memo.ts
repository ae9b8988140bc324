// One body member validated once per distinct value: a client's rtpCapabilities come again, the same,
// with every consumer it asks for (a few kilobytes, and most of what validating a consume body costs).
import type { ZodObject } from 'zod';

/** Distinct values remembered per route; the least recently seen goes first. */
export const MEMO_MAX_ENTRIES = 128;
/** A member longer than this as JSON is validated every time and never remembered. */
export const MEMO_MAX_TEXT_LENGTH = 16 * 1024;

type ParseResult = { success: true; data: unknown } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };

/** Stored for a value whose validated form is itself, member for member (zod stripped nothing). */
const SAME = '';

export interface MemoizedMember {
  /** `schema.safeParse(value)`, with the member's validation skipped when the same value passed before. */
  parse(value: unknown): ParseResult;
  /** Values remembered now (at most MEMO_MAX_ENTRIES). */
  size(): number;
}

/**
 * Remembers which values of `schema.shape[key]` passed, by their JSON text. For a value seen before,
 * only the other members are validated, and the member is the value as sent when its validated form
 * was identical (else a fresh copy of that form), so no two requests share an object: the engine
 * normalises what it is given in place. Only values that passed are remembered, never more than
 * MEMO_MAX_ENTRIES, none longer than MEMO_MAX_TEXT_LENGTH: at most 2 MiB of keys per route.
 * @example const consume = memoizeMember(createConsumerBody, 'rtpCapabilities'); consume.parse(body)
 */
export function memoizeMember(
  schema: ZodObject,
  key: string,
  { maxEntries = MEMO_MAX_ENTRIES, maxTextLength = MEMO_MAX_TEXT_LENGTH }: { maxEntries?: number; maxTextLength?: number } = {},
): MemoizedMember {
  if (!(key in schema.shape)) throw new Error(`memoizeMember: the schema has no member ${key}`);
  const rest = schema.omit({ [key]: true } as Record<string, true>);
  /** JSON text of a value that passed → SAME, or the JSON text of its validated form. */
  const passed = new Map<string, string>();

  return {
    parse(value) {
      const member = isRecord(value) ? value[key] : undefined;
      const text = member !== null && typeof member === 'object' ? JSON.stringify(member) : undefined;
      if (text === undefined || text.length > maxTextLength) return schema.safeParse(value);
      const known = passed.get(text);
      if (known === undefined) {
        const result = schema.safeParse(value);
        if (result.success) {
          const validated = JSON.stringify((result.data as Record<string, unknown>)[key]);
          if (passed.size >= maxEntries) passed.delete(passed.keys().next().value!);
          passed.set(text, validated === text ? SAME : validated);
        }
        return result;
      }
      passed.delete(text); // most recently seen last
      passed.set(text, known);
      const others = rest.safeParse(value);
      if (!others.success) return others;
      return { success: true, data: { ...others.data, [key]: known === SAME ? member : JSON.parse(known) } };
    },
    size: () => passed.size,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
