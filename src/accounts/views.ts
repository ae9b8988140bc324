// Response shapes of the account API, built field by field so no hash or digest can leak.
import { formatTime } from '../time.js';
import type { TokenSet, User } from './service.js';
import type { DeviceSession } from './sessions.js';

export function tokenSetView(tokens: TokenSet) {
  return { token: tokens.accessToken, refresh_token: tokens.refreshToken, expires_in: tokens.expiresIn };
}

/** The user inside a register or login answer. */
export function sessionUserView(user: User) {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    nickname: user.nickname,
    avatar: user.avatar,
    roles: [...user.roles],
  };
}

export function profileView(user: User) {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    nickname: user.nickname,
    avatar: user.avatar,
    gender: user.gender,
    phone: user.phone,
    roles: [...user.roles],
    created_at: formatTime(user.createdAt),
  };
}

export function sessionView(result: { user: User; tokens: TokenSet }) {
  return { ...tokenSetView(result.tokens), user: sessionUserView(result.user) };
}

/** One entry of GET /sessions: the public id only, never a token id or a digest. */
export function deviceSessionView(session: DeviceSession) {
  return {
    id: session.publicId,
    device: session.userAgent,
    ip: session.ip,
    created_at: formatTime(session.createdAt),
    last_used_at: formatTime(session.lastUsedAt),
    current: session.current,
  };
}
