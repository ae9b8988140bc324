// A value a test file uses everywhere but builds only in beforeAll (an app, a server): `late()` gives
// a stand-in that forwards every property to the value once `set()` has been called, so helpers that
// own the beforeAll/afterAll hooks can hand it out at module level.

/**
 * @example
 * const app = late<TestApp>()
 * beforeAll(async () => app.set(await buildTestApp()))
 * it('…', () => app.value.app.request('/healthz'))
 */
export function late<T extends object>(what: string): { readonly value: T; set(value: T): T; get(): T | undefined } {
  let current: T | undefined;
  const get = (): T => {
    if (current === undefined) throw new Error(`${what} is not built yet (use it inside a test or hook)`);
    return current;
  };
  const value = new Proxy({} as T, {
    get: (_, key) => {
      const target = get() as Record<PropertyKey, unknown>;
      const v = target[key];
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
    has: (_, key) => key in get(),
  });
  return {
    value,
    set: (v) => (current = v),
    get: () => current,
  };
}
