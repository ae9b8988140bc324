// Answer shapes, built field by field so no hash or digest can leak; each typed by its output schema in the contract.
import type { TokenSet, User } from '../types.js';
import type { SessionUserView, SessionView, TokenSetView } from './contract.js';

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

export function sessionView(result: { user: User; tokens: TokenSet }): SessionView {
  return { ...tokenSetView(result.tokens), user: sessionUserView(result.user) };
}
