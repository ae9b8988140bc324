// Passkeys: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.
import { z } from 'zod';
import { SharedCode, type AccountErrorRow, type SecondFactorWords } from '../shared/vocabulary.js';

export const codes = {
  /** A passkey ceremony's response did not verify (challenge, origin, RP ID, signature, counter or credential). */
  PASSKEY_REFUSED: 2014,
  /** The account has MAX_PASSKEYS_PER_USER passkeys already. */
  PASSKEY_LIMIT: 2015,
  /** That authenticator's credential is registered already. */
  PASSKEY_EXISTS: 2016,
} as const;
const ApiCode = { ...SharedCode, ...codes };

export const errors = {
  // Which check failed is audited (passkey_login_failed), never answered: one code for all.
  passkey_login_refused: {
    code: ApiCode.PASSKEY_REFUSED,
    status: 401,
    message: 'the passkey could not be verified; ask for new options and try again',
    meaning: 'the assertion did not verify: challenge unknown, used or expired (5 min), origin or RP ID not allowed, unknown credential, bad signature, or a signature counter that went back (a cloned authenticator)',
  },
  passkey_registration_refused: {
    code: ApiCode.PASSKEY_REFUSED,
    status: 400,
    message: 'the new passkey could not be verified; ask for new options and try again',
    meaning: 'the attestation did not verify: challenge unknown, used, expired (5 min) or issued to another user, origin or RP ID not allowed, or the key out of bounds',
  },
  passkey_limit: { code: ApiCode.PASSKEY_LIMIT, status: 409, message: 'this account has the most passkeys allowed; remove one first', meaning: 'the account has 20 passkeys already' },
  passkey_exists: { code: ApiCode.PASSKEY_EXISTS, status: 409, message: 'this passkey is registered already', meaning: "the authenticator's credential is registered already (to this or another account)" },
  no_such_passkey: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such passkey', meaning: "no such passkey (another user's passkey answers the same)" },
  // The re-authentication an action asks for: one factor again through POST /reauth.
  passkey_reauth_refused: {
    code: ApiCode.PASSKEY_REFUSED,
    status: 403,
    message: 'the passkey could not be verified; ask for new options and try again',
    meaning: "the assertion did not verify, or is not of one of the caller's own passkeys (challenge unknown, used, expired or issued to another session's user, origin, RP ID, signature or counter)",
  },
  // Production without WEBAUTHN_RP_ID: the passkey endpoints do not exist.
  passkeys_disabled: { code: ApiCode.NOT_FOUND, status: 404, message: 'passkeys are not available: WEBAUTHN_RP_ID is not configured', meaning: 'passkeys are not configured (production without WEBAUTHN_RP_ID)' },
} as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  // A passkey login that succeeds is `login_succeeded` with detail `passkey`.
  'passkey_added',
  'passkey_removed',
  'passkey_login_failed',
] as const;

/** How a session was opened (a device's `method`). */
export const signInMethods = ['passkey'] as const;

/** How the texts that name every second factor name this one, and its fields when an operator clears them. */
export const secondFactor = {
  name: 'passkeys',
  parts: 'passkeys',
  named: 'passkeys',
  every: 'every passkey',
  adding: 'adding a passkey',
  /** Its fields in the answer of DELETE /internal/v1/users/{id}/mfa and in auth.user.mfa_cleared, and their values from its count. */
  cleared: {
    answer: { passkeys_removed: z.int().min(0) },
    event: { passkeys: z.int().min(0).describe('passkeys removed') },
    values: (count: number) => ({ answer: { passkeys_removed: count }, event: { passkeys: count } }),
  },
} as const satisfies SecondFactorWords;
