// The devices (sessions) a user lists and ends: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.
import { SharedCode as ApiCode, type AccountErrorRow } from '../shared/vocabulary.js';

export const errors = {
  // Another user's session answers exactly like an unknown one.
  no_such_session: { code: ApiCode.NOT_FOUND, status: 404, message: 'no such session', meaning: "no such session (another user's session answers the same)" },
} as const satisfies Record<string, AccountErrorRow>;
