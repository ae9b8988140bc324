// The ways to sign in that features hold for an account besides its password (a passkey, …), so that
// removing one way (a provider identity) can check that another remains without naming each feature.
import type { SQL } from 'drizzle-orm';

export interface SignInMethod {
  /** True, in SQL, when user `userId` holds this way to sign in. */
  heldBy(userId: number): SQL;
}
