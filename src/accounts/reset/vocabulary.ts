// The forgotten-password flow: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.
import { SharedCode, type AccountErrorRow, type AssembledMeanings } from '../shared/vocabulary.js';

export const codes = {
  INVALID_RESET_CODE: 2005,
} as const;
const ApiCode = { ...SharedCode, ...codes };

export const errors = (meanings: AssembledMeanings) => ({
  // A per-client budget of the password reset endpoints: tied to the requester, decided before the
  // e-mail address is looked up, so it says nothing about the address.
  source_throttled: { code: ApiCode.RATE_LIMITED, status: 429, message: 'too many password reset attempts from this address, retry later', meaning: meanings.rateLimited },
  invalid_reset_code: {
    code: ApiCode.INVALID_RESET_CODE,
    status: 400,
    message: 'the code is wrong, used or expired; ask for a new one',
    meaning: 'the code is wrong, used, revoked by a password change, expired (15 min) or out of tries; ask for a new one',
  },
}) as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  'password_reset_requested',
  'password_reset',
  'password_reset_failed',
] as const;
