// The account area's shared vocabulary: who a user is, what an authenticated request carries, who a
// client is. A leaf: features import it, it imports no feature.
import type { users } from './shared/schema.js';
import type { HashOptions } from './passwords.js';

export type User = typeof users.$inferSelect;

/** An account name as findAccount resolved it: its user, if any, the key of its failure budget, its hashing lane. */
export interface FoundAccount {
  user: User | undefined;
  key: string;
  hashing: HashOptions;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  /** Access token lifetime in seconds. */
  expiresIn: number;
}

/** Who opened a session, kept on the session row so a session list is cheap later. */
export interface SessionClient {
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export interface Authenticated {
  sessionId: number;
  /** The session's public id (the `sid` of its access tokens). */
  sessionPublicId: string;
  user: User;
  /** When the access token presented expires. */
  expiresAt: Date;
  /** When the session last proved a factor: its sign-in, or its latest re-authentication (POST /reauth). */
  authenticatedAt: Date;
}

/** What introspection tells of an active access token (RFC 7662's members). */
export interface ActiveToken {
  sub: string;
  sid: string;
  username: string;
  roles: string[];
  iat: number;
  exp: number;
}
