// Answer shapes of the account API, built field by field so no hash or digest can leak; each typed
// by its output schema in the contract.
import { formatTime } from '../../time.js';
import type { AuthEvent } from '../audit/log.js';
import type { AuthEventView } from '../audit/contract.js';
import type { DeviceSessionView } from '../devices/contract.js';
import type { PasskeyView } from '../passkeys/contract.js';
import type { StoredPasskey } from '../passkeys/ceremonies.js';
import type { ProfileView } from '../profile/contract.js';
import type { SessionUserView, SessionView, TokenSetView } from '../sessions/contract.js';
import type { TokenSet, User } from '../types.js';
import type { DeviceSession } from '../devices/directory.js';

export function tokenSetView(tokens: TokenSet): TokenSetView {
  return { token: tokens.accessToken, refresh_token: tokens.refreshToken, expires_in: tokens.expiresIn };
}

/** The user inside a register or login answer. */
export function sessionUserView(user: User): SessionUserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    nickname: user.nickname,
    avatar: user.avatar,
    roles: [...user.roles],
  };
}

/** The session's user and the rest of the profile; the keys in the order the answer has always had. */
export function profileView(user: User): ProfileView {
  const { roles, ...named } = sessionUserView(user);
  return {
    ...named,
    gender: user.gender as ProfileView['gender'],
    phone: user.phone,
    roles,
    created_at: formatTime(user.createdAt),
    email_verified: user.emailVerifiedAt !== null,
  };
}

export function sessionView(result: { user: User; tokens: TokenSet }): SessionView {
  return { ...tokenSetView(result.tokens), user: sessionUserView(result.user) };
}

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

/** One entry of GET /passkeys: the label and times only, never the credential id or key. */
export function passkeyView(passkey: StoredPasskey): PasskeyView {
  return {
    id: passkey.publicId,
    name: passkey.name,
    created_at: formatTime(passkey.createdAt),
    last_used_at: passkey.lastUsedAt ? formatTime(passkey.lastUsedAt) : null,
  };
}
