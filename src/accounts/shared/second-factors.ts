// The second factors as the features that use them all see them, each factor implementing its part
// in its own folder: removing a user's factors inside one statement (a reset of an unproved address,
// an operator's clearing), and what re-authentication accepts of it.
import { sql, type AnyColumn, type SQL, type WithSubquery } from 'drizzle-orm';
import type { z } from 'zod';
import type { Db } from '../../db/client.js';
import type { ErrorRow } from './error-table.js';
import type { SessionClient, User } from '../types.js';

/** A factor's part in removing users' second factors within one statement. */
export interface FactorRemoval {
  /** Its name in the counts, e.g. `passkeys`. */
  name: string;
  /** Its place among the factors removed (the audit detail's order): the lower first. */
  order: number;
  /** Its delete statements for `db.with(...)`, of the users `ofUser` selects. */
  ctes(db: Db, ofUser: (userId: AnyColumn) => SQL): WithSubquery[];
  /** What was removed, selected beside them: how many of it. */
  count: SQL<number>;
  /** How an audit detail says it, e.g. `2 passkeys`. */
  describe(count: number): string;
}

/**
 * The removals of `factors` as one statement's parts: `ctes` for `db.with(...)`, the counts by factor
 * to select beside them, and `deleted` (every row the ctes deleted), which a statement that also
 * writes events selects so that each delete runs in its main part, not after it under the event
 * log's commit lock.
 */
export function secondFactorRemovals(db: Db, ofUser: (userId: AnyColumn) => SQL, factors: readonly FactorRemoval[]) {
  const ctes = factors.flatMap((factor) => factor.ctes(db, ofUser));
  return {
    ctes,
    counts: Object.fromEntries(factors.map((factor) => [factor.name, factor.count])),
    deleted: ctes.length === 0 ? sql<number>`0` : sql<number>`(${sql.join(ctes.map((cte) => sql`(select count(*) from ${cte})`), sql` + `)})`,
  };
}

/** The audit detail of a removal: each factor's count in its words, e.g. `2 passkeys, totp removed`. */
export function removalDetail(factors: readonly FactorRemoval[], counts: Record<string, number>): string {
  return factors.map((factor) => factor.describe(counts[factor.name] ?? 0)).join(', ');
}

/** The body of POST /reauth: the password or one factor's fields. */
export type ReauthBody = Record<string, unknown>;

/**
 * A second factor as re-authentication sees it (the feature list provides them, in its order): the
 * body fields it reads, how the route's texts name it, its refusals, and its check.
 */
export interface ReauthFactor {
  /** Its fields of the body, in the body's order (each optional: exactly one factor is given). */
  fields: z.ZodRawShape;
  /** What the route's summary calls them, e.g. "recovery code". */
  names: readonly string[];
  /** What a fresh session may do because of it, e.g. "add a passkey". */
  freshFor: string;
  /** The refusals its check answers, as the route documents them. */
  errors: readonly ErrorRow[];
  /**
   * Checks the factor when `body` carries its fields: the method proved (the audit row's detail).
   * Undefined when the body is not for it. A refusal throws, after `failed(detail)` audited it.
   */
  check(user: User, body: ReauthBody, client: SessionClient, failed: (detail: string) => Promise<void>): Promise<string> | undefined;
}
