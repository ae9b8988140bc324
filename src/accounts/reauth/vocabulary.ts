// Re-authentication (POST /reauth): what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.
import { SharedCode, type AccountErrorRow } from '../shared/vocabulary.js';

export const codes = {
  /** The session signed in or re-authenticated too long ago (REAUTH_WINDOW_S) for this action: POST /reauth first. */
  REAUTH_REQUIRED: 2017,
} as const;
const ApiCode = { ...SharedCode, ...codes };

export const errors = {
  reauthentication_required: {
    code: ApiCode.REAUTH_REQUIRED,
    status: 403,
    message: 'sign in again or re-authenticate (POST /reauth) first',
    meaning: 'the session signed in or re-authenticated longer than REAUTH_WINDOW_S (300 s) ago: prove a factor again with POST /reauth, then repeat the request',
  },
} as const satisfies Record<string, AccountErrorRow>;

export const auditTypes = [
  // A signed-in session proved a factor again, or failed to.
  'reauthenticated',
  'reauthentication_failed',
] as const;
