// Answer shapes, built field by field so no hash or digest can leak; each typed by its output schema in the contract.
import { formatTime } from '../../time.js';
import type { DeviceSessionView } from './contract.js';
import type { DeviceSession } from './directory.js';

/** One entry of GET /sessions: the public id only, never a token id or a digest. */
export function deviceSessionView(session: DeviceSession): DeviceSessionView {
  return {
    id: session.publicId,
    device: session.userAgent,
    ip: session.ip,
    created_at: formatTime(session.createdAt),
    last_used_at: formatTime(session.lastUsedAt),
    current: session.current,
    auth_method: session.authMethod,
  };
}
