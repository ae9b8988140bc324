// Changing the password: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.

export const auditTypes = [
  'password_changed',
  'password_change_failed',
] as const;
