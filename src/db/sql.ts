// Helpers for the single-statement writes of the stores: constraint names of unique violations, and
// insert…select with every value typed.
import { getTableColumns, is, SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';

/** The violated unique constraint's name, for PostgreSQL error 23505 from either driver (drizzle wraps it in `cause`). */
export function uniqueViolation(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const candidate = e as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (candidate.code === '23505') {
      const name = candidate.constraint_name ?? candidate.constraint;
      return typeof name === 'string' ? name : '';
    }
  }
  return undefined;
}

/**
 * `insert into <table> (<columns>) select <values> <tail>`, listing every column but the identity
 * (drizzle's own insert…select lists that too). Each value is cast to its column's type, since a
 * parameter in a select list has none.
 */
export function insertSelect<T extends PgTable>(table: T, values: Record<string, unknown>, tail: SQL): SQL {
  const columns = Object.entries(getTableColumns(table)).filter(([, column]) => column.generatedIdentity === undefined);
  const names = columns.map(([, column]) => sql.identifier(column.name));
  const row = columns.map(([key, column]) => {
    if (!(key in values)) throw new Error(`insertSelect: no value for ${key}`);
    const value = values[key];
    if (is(value, SQL)) return value;
    if (value === null) return sql`null::${sql.raw(column.getSQLType())}`;
    return sql`${sql.param(value, column)}::${sql.raw(column.getSQLType())}`;
  });
  return sql`insert into ${table} (${sql.join(names, sql`, `)}) select ${sql.join(row, sql`, `)} ${tail}`;
}
