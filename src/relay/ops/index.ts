// The binding of ops to one set of deps. Ops are plain functions `(deps, ...input) -> result`; the
// relay's table of them is every family's ops (kinds/index.ts), which media-service.ts binds here.
import type { OpsDeps } from './deps.js';

/** Ops with their deps given: what a caller of the relay sees of `(deps, ...input) -> result`. */
export type Bound<T> = { [K in keyof T]: T[K] extends (deps: OpsDeps, ...args: infer A) => infer R ? (...args: A) => R : never };

/** What a family's routes are given: the family's own ops, bound, and the same per request (`forRequest`). */
export type FamilyMedia<Ops> = Bound<Ops> & {
  /** The ops for the HTTP request `requestId` (its id goes into the engine calls' failure logs). */
  forRequest(requestId: string | undefined): Bound<Ops>;
};

type OpsTable = Record<string, unknown>;

export function bindOps<T extends OpsTable>(table: T, deps: OpsDeps): Bound<T> {
  return Object.fromEntries(
    Object.entries(table).map(([name, op]) => [name, (...args: unknown[]) => (op as (deps: OpsDeps, ...a: unknown[]) => unknown)(deps, ...args)]),
  ) as Bound<T>;
}

/**
 * Binds the ops to deps made per call (a request's own engine): one object per binding, the methods
 * on a prototype built once, where bindOps makes a closure per op.
 * @example const bind = opsBinder(OPS); bind({ ...deps, engine: engineFor(requestId) }).createTransport(input)
 */
export function opsBinder<T extends OpsTable>(table: T): (deps: OpsDeps) => Bound<T> {
  const proto: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(table)) {
    proto[name] = function (this: { deps: OpsDeps }, ...args: unknown[]) {
      return (op as (deps: OpsDeps, ...a: unknown[]) => unknown)(this.deps, ...args);
    };
  }
  return (deps) => Object.assign(Object.create(proto) as object, { deps }) as unknown as Bound<T>;
}
