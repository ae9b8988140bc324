// Answer shapes, built field by field so no hash or digest can leak; each typed by its output schema in the contract.
import { formatTime } from '../../time.js';
import type { AuthEventView } from './contract.js';
import type { AuthEvent } from './log.js';

/** One event of the audit trail, for operators. */
export function authEventView(e: AuthEvent): AuthEventView {
  return {
    id: e.id,
    // Written only from AUTH_EVENT_TYPES (AuditLog.record takes an AuthEventType).
    type: e.type as AuthEventView['type'],
    time: formatTime(e.occurredAt),
    user_id: e.userId,
    session_id: e.sessionId,
    account: e.account,
    detail: e.detail,
    ip: e.ip,
    user_agent: e.userAgent,
  };
}
