// How deep a parsed JSON body nests, found without recursion (a body may nest 100 000 levels deep).

/**
 * The path (keys and array indexes, as strings) of the first object or array nested deeper than
 * `maxDepth` levels (the value itself is level 1), or undefined when none is. Stops at the first one.
 * @example tooDeepAt({ a: { b: [1] } }, 2) // ['a', 'b']
 */
export function tooDeepAt(value: unknown, maxDepth: number): string[] | undefined {
  const stack: [unknown, string[]][] = [[value, []]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (path.length >= maxDepth) return path;
    for (const [key, child] of Object.entries(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, [...path, key]]);
    }
  }
  return undefined;
}
