// Every op of every resource family, and their binding to one set of deps. A new family is a new
// file beside these and one line in OPS.
import * as consumers from './consumers.js';
import * as controls from './controls.js';
import * as data from './data.js';
import type { OpsDeps } from './deps.js';
import * as pipes from './pipes.js';
import * as plain from './plain.js';
import * as producers from './producers.js';
import * as routers from './routers.js';
import * as transports from './transports.js';

const OPS = { ...routers, ...transports, ...producers, ...consumers, ...controls, ...data, ...pipes, ...plain };

type Bound<T> = { [K in keyof T]: T[K] extends (deps: OpsDeps, ...args: infer A) => infer R ? (...args: A) => R : never };

/** The relay's operations, deps already given: `ops.createRouter(input)`. */
export type MediaOps = Bound<typeof OPS>;

export function bindOps(deps: OpsDeps): MediaOps {
  return Object.fromEntries(
    Object.entries(OPS).map(([name, op]) => [name, (...args: unknown[]) => (op as (deps: OpsDeps, ...a: unknown[]) => unknown)(deps, ...args)]),
  ) as MediaOps;
}

/**
 * Binds the ops to deps made per call (a request's own engine): one object per binding, the methods
 * on a prototype built once, where bindOps makes a closure per op.
 * @example const bind = opsBinder(); bind({ ...deps, engine: engineFor(requestId) }).createTransport(input)
 */
export function opsBinder(): (deps: OpsDeps) => MediaOps {
  const proto: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(OPS)) {
    proto[name] = function (this: { deps: OpsDeps }, ...args: unknown[]) {
      return (op as (deps: OpsDeps, ...a: unknown[]) => unknown)(this.deps, ...args);
    };
  }
  return (deps) => Object.assign(Object.create(proto) as object, { deps }) as unknown as MediaOps;
}
