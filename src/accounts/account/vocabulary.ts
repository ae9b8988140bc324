// Deleting the account: what the feature adds to the account area's vocabulary (src/accounts/vocabulary.ts)
// — its envelope codes, its rows of the error table, its audit event types. A leaf.

export const auditTypes = [
  'account_deleted',
  'account_deletion_failed',
] as const;
