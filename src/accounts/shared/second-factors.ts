// Removing a user's second factors (passkeys, the TOTP factor, its recovery codes, open login second
// steps) inside one statement, and the counts it reports: for a reset of an unproved address and for
// an operator's clearing alike.
import { sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { Db } from '../../db/client.js';
import type { ErrorRow } from './error-table.js';
import type { SessionClient, User } from '../types.js';
import { mfaChallenges, recoveryCodes, totpFactors, webauthnCredentials } from '../../db/schema.js';

/** The statement's parts: `ctes` for `db.with(...)`, and the two counts to select beside them. */
export function secondFactorRemovals(db: Db, ofUser: (userId: AnyColumn) => SQL) {
  const passkeysGone = db.$with('passkeys_gone').as(db.delete(webauthnCredentials).where(ofUser(webauthnCredentials.userId)).returning({ id: webauthnCredentials.id }));
  const totpGone = db.$with('totp_gone').as(db.delete(totpFactors).where(ofUser(totpFactors.userId)).returning({ enabledAt: totpFactors.enabledAt }));
  const codesGone = db.$with('codes_gone').as(db.delete(recoveryCodes).where(ofUser(recoveryCodes.userId)).returning({ id: recoveryCodes.id }));
  const challengesGone = db.$with('challenges_gone').as(db.delete(mfaChallenges).where(ofUser(mfaChallenges.userId)).returning({ id: mfaChallenges.id }));
  return {
    ctes: [passkeysGone, totpGone, codesGone, challengesGone] as const,
    /** Passkeys removed. */
    passkeys: sql<number>`(select count(*) from passkeys_gone)`.mapWith(Number),
    /** 1 when an enabled TOTP factor was removed (a setup never enabled does not count). */
    totp: sql<number>`(select count(*) from totp_gone where enabled_at is not null)`.mapWith(Number),
  };
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
