// Whether the owner proved the account's address, as a feature that proves it without keeping the
// proof sees it: a completed reset (its code came to the address) records the proof, inside its own
// statement, through this. The feature that keeps the proof gives it (the feature list); a reset
// uses it in its one statement, so the proof is recorded together with the new password or not at all.
import { sql, type SQL } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { AuthEventInput } from '../audit/log.js';
import type { users } from './schema.js';

export interface AddressProof {
  /** Whether the user's address is proved, on a row of `users` as the statement reads it (a selected column, or a condition). */
  proved(): SQL<boolean>;
  /** The change of a row of `users` that records a proof at `at` (an earlier proof stays). */
  record(at: Date): PgUpdateSetSource<typeof users>;
  /** The values of a new row of `users` whose address was proved at `at` (e.g. asserted by an identity provider). */
  provedAtCreation(at: Date): Partial<typeof users.$inferInsert>;
  /** The audit row of a proof by `how` (e.g. `password_reset`); the caller adds the user and the client. */
  audited(how: string): Pick<AuthEventInput, 'type' | 'detail'>;
}

/** Without a feature that keeps the proof, every address counts as proved: nothing to record, nothing to remove for want of it. */
export const NO_ADDRESS_PROOF: AddressProof = {
  proved: () => sql<boolean>`true`,
  record: () => ({}),
  provedAtCreation: () => ({}),
  audited: () => {
    throw new Error('no feature keeps the proof of an address: nothing to audit');
  },
};
