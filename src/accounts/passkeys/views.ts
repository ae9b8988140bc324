// Answer shapes, built field by field so no hash or digest can leak; each typed by its output schema in the contract.
import { formatTime } from '../../time.js';
import type { StoredPasskey } from './ceremonies.js';
import type { PasskeyView } from './contract.js';

/** One entry of GET /passkeys: the label and times only, never the credential id or key. */
export function passkeyView(passkey: StoredPasskey): PasskeyView {
  return {
    id: passkey.publicId,
    name: passkey.name,
    created_at: formatTime(passkey.createdAt),
    last_used_at: passkey.lastUsedAt ? formatTime(passkey.lastUsedAt) : null,
  };
}
