// Passkeys' part in removing a user's second factors (every credential, counted), and as a way to sign in.
import { sql } from 'drizzle-orm';
import type { FactorRemoval } from '../shared/second-factors.js';
import type { SignInMethod } from '../shared/sign-in-methods.js';
import { secondFactor } from './vocabulary.js';
import { webauthnCredentials } from './schema.js';

export const passkeyRemoval: FactorRemoval = {
  name: secondFactor.name,
  order: 1,
  ctes: (db, ofUser) => [db.$with('passkeys_gone').as(db.delete(webauthnCredentials).where(ofUser(webauthnCredentials.userId)).returning({ id: webauthnCredentials.id }))],
  count: sql<number>`(select count(*) from passkeys_gone)`.mapWith(Number),
  describe: (count) => `${count} passkeys`,
};

/** An account with a passkey can sign in with it. */
export const passkeySignIn: SignInMethod = {
  heldBy: (userId) => sql`exists (select 1 from ${webauthnCredentials} where ${webauthnCredentials.userId} = ${userId})`,
};
