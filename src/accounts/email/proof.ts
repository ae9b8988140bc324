// What "the owner proved the address" is: the time of the first proof on the user's row, and its
// audit row. The verification by a mailed code records it here, and so does a completed reset,
// which gets it through the feature list (AddressProof).
import { sql } from 'drizzle-orm';
import { users } from '../shared/schema.js';
import type { AddressProof } from '../shared/address-proof.js';

export const addressProof: AddressProof = {
  proved: () => sql<boolean>`${users.emailVerifiedAt} is not null`,
  record: (at) => ({ emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, ${at.toISOString()}::timestamptz)` }),
  provedAtCreation: (at) => ({ emailVerifiedAt: at }),
  audited: (how) => ({ type: 'email_verified', detail: how }),
};
