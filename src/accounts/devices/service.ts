// The caller's sessions as devices: the list, and ending one with its audit row. Knows nothing of HTTP.
import type { AuditLog } from '../audit/log.js';
import type { Authenticated, SessionClient } from '../types.js';
import type { DeviceSession, SessionDirectory } from './directory.js';

export class DeviceService {
  constructor(private readonly deps: { devices: SessionDirectory; audit: AuditLog }) {}

  list(auth: Authenticated): Promise<DeviceSession[]> {
    return this.deps.devices.list(auth.user.id, auth.sessionId);
  }

  /** Ends one of the caller's sessions by its public id (AuthError `no_such_session` for another's or an unknown one). */
  async end(auth: Authenticated, publicId: string, client: SessionClient): Promise<void> {
    const ended = await this.deps.devices.end(auth.user.id, publicId);
    await this.deps.audit.record({ type: 'session_ended', userId: auth.user.id, sessionId: ended.publicId, detail: 'user', reason: 'revoked', ip: client.ip, userAgent: client.userAgent });
  }
}
