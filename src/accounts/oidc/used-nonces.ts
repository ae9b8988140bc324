// The nonces of the ID tokens the native flow took: each once, while its token could be accepted.
import { lte } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { AuthKeys } from '../../secrets/auth-key.js';
import type { VerifiedIdentity } from './providers.js';
import { oidcUsedNonces } from './schema.js';

/**
 * Takes the verified token's nonce (a keyed digest of provider and nonce, kept until the token could
 * no longer be accepted anyway): false when it was taken before and its token is still acceptable.
 * A row whose token can no longer be accepted is taken over (the hourly prune removes the rest).
 */
export async function takeNonce(db: Db, keys: AuthKeys, identity: VerifiedIdentity, at: Date): Promise<boolean> {
  const [taken] = await db
    .insert(oidcUsedNonces)
    .values({ digest: keys.digest('oidc-nonce-digest', `${identity.provider}:${identity.tokenNonce}`), expiresAt: identity.acceptableUntil })
    .onConflictDoUpdate({ target: oidcUsedNonces.digest, set: { expiresAt: identity.acceptableUntil }, setWhere: lte(oidcUsedNonces.expiresAt, at) })
    .returning({ digest: oidcUsedNonces.digest });
  return taken !== undefined;
}
