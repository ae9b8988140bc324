// What AuthService is built from, and what a registration gives it.
import type { Db } from '../../db/client.js';
import type { Logger } from '../../logger.js';
import type { HashCost } from '../passwords.js';
import type { SessionClient } from '../types.js';
import type { AccessTokens } from './access-tokens.js';

export interface RegisterInput {
  username: string;
  email: string;
  password: string;
  /** Missing or empty: the username. */
  nickname?: string | undefined;
}

export interface AuthServiceDeps {
  db: Db;
  /** Signs the access tokens (JWTs) and verifies them. */
  accessTokens: AccessTokens;
  /** Seconds. */
  accessTokenTtl: number;
  /** Seconds. */
  refreshTokenTtl: number;
  now: () => Date;
  logger: Logger;
  /** Told when a rotated refresh token comes back and its session is revoked (for metrics and the audit trail). */
  onRefreshReuse?: (revoked: { userId: number; sessionPublicId: string }, client: SessionClient | undefined) => void;
  /** Seconds after a rotation during which the rotated token, presented again, revokes nothing (default 0). */
  refreshReuseGraceS?: number;
  /** Expected wait for an argon2 slot beyond which the request is refused with `server_busy` (default 2000). */
  hashMaxWaitMs?: number;
  /** argon2id's cost of new hashes; the production parameters when absent (tests give a lower one). */
  hashCost?: HashCost | undefined;
}
