// Answer shapes, built field by field so no provider subject leaks beyond what the owner needs.
import { formatTime } from '../../time.js';
import type { IdentityView } from './contract.js';
import type { StoredIdentity } from './service.js';

/** One entry of GET /identities. */
export function identityView(identity: StoredIdentity): IdentityView {
  return {
    id: identity.publicId,
    provider: identity.provider,
    email: identity.email,
    linked_at: formatTime(identity.linkedAt),
    last_used_at: identity.lastUsedAt ? formatTime(identity.lastUsedAt) : null,
  };
}
