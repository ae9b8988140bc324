// How deep a JSON body nests, found without deep recursion (a body may nest 100 000 levels deep): from
// its text before it is parsed, and where in the parsed value.

/**
 * The path (keys and array indexes, as strings) of the first object or array nested deeper than
 * `maxDepth` levels (the value itself is level 1), or undefined when none is. Stops at the first one.
 * The walk recurses at most `maxDepth` levels, whatever the value's own depth, and builds a path only
 * for the hit; children are visited last key first (the order of the stack-based walk it replaced).
 * @example tooDeepAt({ a: { b: [1] } }, 2) // ['a', 'b']
 */
export function tooDeepAt(value: unknown, maxDepth: number): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  return deepAt(value, 0, maxDepth);
}

/**
 * `node` is an object or array `depth` keys below the value. Children are looked at with `for…in`,
 * which allocates nothing for the plain objects and arrays JSON.parse makes (Object.keys made an array
 * per node: the consume body has about a hundred); on a hit, its path is the last key whose subtree
 * holds one, as the walk over the keys in reverse gave.
 */
function deepAt(node: object, depth: number, maxDepth: number): string[] | undefined {
  if (depth >= maxDepth) return [];
  let found: string[] | undefined;
  let foundKey = '';
  for (const key in node) {
    if (!Object.hasOwn(node, key)) continue;
    const child = (node as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object') {
      const deeper = deepAt(child, depth + 1, maxDepth);
      if (deeper !== undefined) {
        found = deeper;
        foundKey = key;
      }
    }
  }
  if (found !== undefined) found.unshift(foundKey);
  return found;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether the JSON text `text` opens no object or array deeper than `maxDepth` levels (the value
 * itself is level 1), counting the brackets outside strings. Read from the text, so a request's body
 * is checked before it is parsed: the validation parses it once, after this. Never says "within" for
 * a value `tooDeepAt` finds too deep; a text that does not parse may get either answer (its parse
 * fails anyway), and one whose duplicate keys hide a deep member from JSON.parse is "not within"
 * here and fine to `tooDeepAt`: call that for the verdict and the path whenever this says false.
 * @example nestsAtMost('{"a":{"b":[1]}}', 2) // false
 */
export function nestsAtMost(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // To the string's closing quote; an escaped character (\" among them) is skipped.
      for (i += 1; i < text.length; i += 1) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i += 1;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) return false;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return true;
}
