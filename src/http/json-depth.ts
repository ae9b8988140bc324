// How deep a parsed JSON body nests, found without deep recursion (a body may nest 100 000 levels deep).

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
