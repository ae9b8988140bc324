// TOTP's part in removing a user's second factors: the factor, its recovery codes and open login
// second steps; counted 1 when an enabled factor went (a setup never enabled does not count).
import { sql } from 'drizzle-orm';
import type { FactorRemoval } from '../shared/second-factors.js';
import { secondFactor } from './vocabulary.js';
import { mfaChallenges, recoveryCodes, totpFactors } from './schema.js';

export const totpRemoval: FactorRemoval = {
  name: secondFactor.name,
  order: 2,
  ctes: (db, ofUser) => [
    db.$with('totp_gone').as(db.delete(totpFactors).where(ofUser(totpFactors.userId)).returning({ enabledAt: totpFactors.enabledAt })),
    db.$with('codes_gone').as(db.delete(recoveryCodes).where(ofUser(recoveryCodes.userId)).returning({ id: recoveryCodes.id })),
    db.$with('challenges_gone').as(db.delete(mfaChallenges).where(ofUser(mfaChallenges.userId)).returning({ id: mfaChallenges.id })),
  ],
  count: sql<number>`(select count(*) from totp_gone where enabled_at is not null)`.mapWith(Number),
  describe: (count) => `totp ${count > 0 ? 'removed' : 'off'}`,
};
