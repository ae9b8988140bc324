// Verifying and changing the address: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types, its fields of the views of a user. A leaf.
import { z } from 'zod';
import { SharedCode, type AccountErrorRow, type AssembledMeanings } from '../shared/vocabulary.js';

export const codes = {
  /** An e-mail code (verification or address change) wrong, used, retired or expired. */
  INVALID_EMAIL_CODE: 2008,
  /** The address is verified already: nothing to verify, no code to send. */
  EMAIL_ALREADY_VERIFIED: 2009,
  /** new_email is the account's address already. */
  SAME_EMAIL: 2010,
  /** The action needs a verified e-mail address (POST /email/verify first). */
  EMAIL_NOT_VERIFIED: 2018,
} as const;
const ApiCode = { ...SharedCode, ...codes };

export const errors = (meanings: AssembledMeanings) => ({
  invalid_email_code: {
    code: ApiCode.INVALID_EMAIL_CODE,
    status: 400,
    message: 'the code is wrong, used or expired; ask for a new one',
    meaning: 'the e-mail code is wrong, used, replaced by a newer one, expired (15 min) or out of tries (5); ask for a new one',
  },
  email_already_verified: { code: ApiCode.EMAIL_ALREADY_VERIFIED, status: 409, message: 'the e-mail address is already verified', meaning: 'the address is verified already: nothing to do' },
  same_email: { code: ApiCode.SAME_EMAIL, status: 409, message: "new_email is already the account's address", meaning: "new_email is the account's address already" },
  email_not_verified: {
    code: ApiCode.EMAIL_NOT_VERIFIED,
    status: 403,
    message: 'verify your e-mail address first',
    meaning: `${meanings.addingFactors} needs a verified e-mail address (POST /email/verify)`,
  },
}) as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  'email_verified',
  'email_verification_failed',
  'email_change_requested',
  'email_change_failed',
  'email_changed',
] as const;

/** A change of address ends the other sessions. */
export const sessionEndReasons = ['email_changed'] as const;
export const sessionEndedBy = { email_change: 'email_changed' } as const;

/** What the feature adds to the views of a user (the owner's, an operator's): whether the owner proved the address. */
export const userViewFields = {
  owner: { email_verified: z.boolean().describe('whether the owner proved the address (a mailed code, or a completed password reset)') },
  operator: { email_verified: z.boolean().describe('the address was proved by a mailed code') },
  values: (user: { emailVerifiedAt: Date | null }) => ({ email_verified: user.emailVerifiedAt !== null }),
};
