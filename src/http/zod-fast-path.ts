// A fast path for zod schemas on JSON request bodies: the schema's own definition (its `_zod.def`
// tree, zod 4's introspection surface) compiled once into one plain function that accepts a value, or
// answers "not sure". It never decides a rejection: whatever it does not accept is parsed by zod
// itself, so every error a client sees is zod's. What it accepts comes out exactly as zod's
// `safeParse` gives it (same members, same order, unknown members stripped):
// test/http/zod-fast-path.test.ts holds it to that over generated bodies, valid and hostile.
//
// Why: zod's generic per-node machinery (a payload and an issue list per value, every check through a
// wrapper) made the relay's consume body, with its 3.6 KB of rtpCapabilities, cost more than twice its
// JSON.parse. Compiled like this, with named property stores as zod's own object "fastpass" does, the
// same check costs a fraction of it (bench/RESULTS.md, "Stop 22").
//
// Only the node kinds and checks the relay's bodies use are known here: object without catchall,
// array, string, number, boolean, enum, optional, record with string keys, union, unknown; length,
// regex, safe-integer and range checks, and refinements (zod's own check function, called as zod calls
// it). A schema holding anything else gets no fast path, and zod parses it as before. Like zod's
// fastpass, it needs `new Function` (a runtime that forbids it gets no fast path).
import type { ZodType } from 'zod';

/** What a fast parser answers for a value it does not accept (zod then parses it). */
export const NOT_SURE: unique symbol = Symbol('not sure');
export type FastParse = (value: unknown) => unknown;

/** The fast parser of `schema`, or undefined when the schema uses a kind or a check not known here. */
export function compileFastParse(schema: ZodType): FastParse | undefined {
  const compiler = new Compiler();
  try {
    return compiler.function(schema as unknown as ZodNode);
  } catch (error) {
    if (error instanceof Unsupported || error instanceof EvalError) return undefined;
    throw error;
  }
}

class Unsupported extends Error {}

/** The part of zod 4's internal definition that is read here. */
interface ZodNode {
  _zod: {
    def: {
      type: string;
      checks?: ZodCheck[];
      shape?: Record<string, ZodNode>;
      element?: ZodNode;
      innerType?: ZodNode;
      keyType?: ZodNode;
      valueType?: ZodNode;
      options?: ZodNode[];
      entries?: Record<string, unknown>;
      /** z.int(): the number's own safe-integer check. */
      format?: string;
    };
  };
}

interface ZodCheck {
  _zod: {
    def: { check: string; format?: string; pattern?: RegExp; value?: number; inclusive?: boolean; maximum?: number; minimum?: number };
    check(payload: { value: unknown; issues: unknown[] }): unknown;
  };
}

/** A refinement passes: zod's check function, on a payload as zod builds it. */
function refinementPasses(check: ZodCheck, value: unknown): boolean {
  const payload = { value, issues: [] as unknown[] };
  const result = check._zod.check(payload);
  return !(result instanceof Promise) && payload.issues.length === 0;
}

/** Generates one function's statements; constants (patterns, sets, checks, nested functions) go by index into `k`. */
class Compiler {
  private readonly constants: unknown[] = [];
  private names = 0;

  function(node: ZodNode): FastParse {
    const lines: string[] = [];
    const result = this.node(node, 'input', lines);
    lines.push(`return ${result};`);
    const body = `"use strict";\n${lines.join('\n')}`;
    // Generated from the schema definition only, never from input.
    const make = new Function('k', 'NS', 'refinementPasses', 'isPlainObject', `return function fastParse(input) {\n${body}\n};`);
    return make(this.constants, NOT_SURE, refinementPasses, isPlainObject) as FastParse;
  }

  private name(prefix: string): string {
    this.names += 1;
    return `${prefix}${this.names}`;
  }

  private constant(value: unknown): string {
    this.constants.push(value);
    return `k[${this.constants.length - 1}]`;
  }

  /** Statements checking `value` (an expression that is a plain variable) and naming its output; returns that name. */
  private node(node: ZodNode, value: string, out: string[]): string {
    const def = node._zod.def;
    knownDefinition(def);
    let result: string;
    switch (def.type) {
      case 'string':
      case 'boolean':
        out.push(`if (typeof ${value} !== '${def.type}') return NS;`);
        result = value;
        break;
      case 'number':
        out.push(`if (typeof ${value} !== 'number' || !Number.isFinite(${value})) return NS;`);
        // z.int() is a number whose definition is its own safe-integer check.
        if (def.format !== undefined) out.push(this.check(node as unknown as ZodCheck, value));
        result = value;
        break;
      case 'unknown':
        result = value;
        break;
      case 'enum': {
        // String values only: a numeric TypeScript enum's entries also hold its reverse mapping.
        const values = Object.values(def.entries ?? {});
        if (values.some((v) => typeof v !== 'string')) throw new Unsupported('enum of non-strings');
        out.push(`if (!${this.constant(new Set(values))}.has(${value})) return NS;`);
        result = value;
        break;
      }
      case 'optional': {
        result = this.name('o');
        const inner: string[] = [];
        const innerResult = this.node(def.innerType!, value, inner);
        out.push(`let ${result};`, `if (${value} !== undefined) {`, ...inner, `${result} = ${innerResult};`, '}');
        break;
      }
      case 'array': {
        result = this.name('a');
        const i = this.name('i');
        const item = this.name('e');
        const inner: string[] = [];
        const itemResult = this.node(def.element!, item, inner);
        out.push(
          `if (!Array.isArray(${value})) return NS;`,
          `const ${result} = new Array(${value}.length);`,
          `for (let ${i} = 0; ${i} < ${value}.length; ${i} += 1) {`,
          `const ${item} = ${value}[${i}];`,
          ...inner,
          `${result}[${i}] = ${itemResult};`,
          '}',
        );
        break;
      }
      case 'union': {
        // Each option is a function of its own: an option that does not accept must not end this one.
        const options = def.options!.map((option) => this.constant(new Compiler().function(option)));
        result = this.name('u');
        out.push(`let ${result} = ${options[0]}(${value});`);
        for (const option of options.slice(1)) out.push(`if (${result} === NS) ${result} = ${option}(${value});`);
        out.push(`if (${result} === NS) return NS;`);
        break;
      }
      case 'record':
        result = this.record(node, value, out);
        break;
      case 'object':
        result = this.object(node, value, out);
        break;
      default:
        throw new Unsupported(def.type);
    }
    for (const check of def.checks ?? []) out.push(this.check(check, result));
    return result;
  }

  /** String keys; a key zod treats specially (`__proto__`) is left to zod. Members in the input's order, as zod's. */
  private record(node: ZodNode, value: string, out: string[]): string {
    const { keyType, valueType } = node._zod.def;
    if (keyType!._zod.def.type !== 'string') throw new Unsupported('record key');
    const result = this.name('r');
    const key = this.name('key');
    const member = this.name('m');
    const keyLines: string[] = [];
    this.node(keyType!, key, keyLines);
    const valueLines: string[] = [];
    const valueResult = this.node(valueType!, member, valueLines);
    out.push(
      `if (!isPlainObject(${value})) return NS;`,
      `const ${result} = {};`,
      `for (const ${key} in ${value}) {`,
      `if (${key} === '__proto__') return NS;`,
      ...keyLines,
      `const ${member} = ${value}[${key}];`,
      ...valueLines,
      `${result}[${key}] = ${valueResult};`,
      '}',
    );
    return result;
  }

  /**
   * Unknown members stripped; members in the shape's order, each kept when present (`in`, as zod's
   * own compiled parser tests it); a required member absent is not accepted.
   */
  private object(node: ZodNode, value: string, out: string[]): string {
    const { shape } = node._zod.def;
    const result = this.name('b');
    out.push(`if (typeof ${value} !== 'object' || ${value} === null || Array.isArray(${value})) return NS;`, `const ${result} = {};`);
    for (const [key, child] of Object.entries(shape!)) {
      if (key === '__proto__') throw new Unsupported('__proto__ member');
      const literal = JSON.stringify(key);
      const member = this.name('m');
      const inner: string[] = [];
      const optional = child._zod.def.type === 'optional';
      if (optional) knownDefinition(child._zod.def);
      const memberResult = this.node(optional ? child._zod.def.innerType! : child, member, inner);
      for (const check of optional ? (child._zod.def.checks ?? []) : []) inner.push(this.check(check, memberResult));
      out.push(
        optional ? `if (${literal} in ${value}) {` : `if (!(${literal} in ${value})) return NS;\n{`,
        `const ${member} = ${value}[${literal}];`,
        ...(optional ? [`if (${member} !== undefined) {`] : []),
        ...inner,
        `${result}[${literal}] = ${memberResult};`,
        ...(optional ? ['}', `else ${result}[${literal}] = undefined;`] : []),
        '}',
      );
    }
    return result;
  }

  /** One check as a statement that returns NS when `value` fails it. */
  private check(check: ZodCheck, value: string): string {
    const def = check._zod.def;
    switch (def.check) {
      case 'min_length':
        return `if (${value}.length < ${Number(def.minimum)}) return NS;`;
      case 'max_length':
        return `if (${value}.length > ${Number(def.maximum)}) return NS;`;
      case 'greater_than':
        return `if (!(${value} ${def.inclusive ? '>=' : '>'} ${this.constant(def.value)})) return NS;`;
      case 'less_than':
        return `if (!(${value} ${def.inclusive ? '<=' : '<'} ${this.constant(def.value)})) return NS;`;
      case 'number_format':
        if (def.format !== 'safeint') throw new Unsupported(`number format ${def.format}`);
        return `if (!Number.isSafeInteger(${value})) return NS;`;
      case 'string_format': {
        if (def.format !== 'regex' || !(def.pattern instanceof RegExp)) throw new Unsupported(`string format ${def.format}`);
        const pattern = this.constant(def.pattern);
        return `${pattern}.lastIndex = 0; if (!${pattern}.test(${value})) return NS;`;
      }
      case 'custom':
        return `if (!refinementPasses(${this.constant(check)}, ${value})) return NS;`;
      default:
        throw new Unsupported(`check ${def.check}`);
    }
  }
}

/**
 * The members each kind's definition may hold here: anything else (a string format such as z.email(),
 * a coercion, a catchall, a discriminator, a member a later zod adds) means a behaviour not compiled
 * here, so the schema gets no fast path. `error` only shapes zod's messages.
 */
const KNOWN_MEMBERS: Record<string, readonly string[]> = {
  string: ['checks'],
  number: ['checks', 'format', 'check', 'abort'],
  boolean: [],
  unknown: [],
  enum: ['entries'],
  optional: ['innerType'],
  array: ['element', 'checks'],
  object: ['shape', 'checks'],
  record: ['keyType', 'valueType', 'checks'],
  union: ['options'],
};

function knownDefinition(def: ZodNode['_zod']['def']): void {
  const known = KNOWN_MEMBERS[def.type];
  if (!known) throw new Unsupported(def.type);
  for (const member of Object.keys(def)) {
    if (member !== 'type' && member !== 'error' && !known.includes(member)) throw new Unsupported(`${def.type}.${member}`);
  }
}

/** As zod's record takes it: an object whose prototype is Object's or none (JSON.parse makes only these). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
