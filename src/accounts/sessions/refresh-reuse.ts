// Refresh-token reuse: a rotated token presented again ends its session (outside the grace period).
import { eq, sql } from 'drizzle-orm';
import { rotatedRefreshTokens, sessions } from '../../db/schema.js';
import { accountEventRows, sessionsEnded } from '../shared/account-events.js';
import type { SessionClient } from '../types.js';
import type { AuthServiceDeps } from './auth-deps.js';
import { secretMatches } from './tokens.js';

/**
 * A rotated refresh token presented again means it leaked: end the session it belonged to.
 * A presentation that began before the rotation, or at the same millisecond, is a concurrent
 * request that lost the race (its lookup merely ran after the winner committed), not a reuse; so
 * is one within the grace period after the rotation (RFC 9700 §4.14.2 allows one): a client whose
 * two tabs refreshed a moment apart, or that retried after a lost answer, keeps its session.
 */
export async function revokeIfReused(deps: AuthServiceDeps, refreshId: string, secret: string, presentedAt: Date, client: SessionClient | undefined): Promise<void> {
  const { db, logger } = deps;
  const [rotated] = await db
    .select({
      sessionId: rotatedRefreshTokens.sessionId,
      refreshHash: rotatedRefreshTokens.refreshHash,
      rotatedAt: rotatedRefreshTokens.rotatedAt,
    })
    .from(rotatedRefreshTokens)
    .where(eq(rotatedRefreshTokens.refreshId, refreshId))
    .limit(1);
  if (!rotated || !secretMatches(secret, rotated.refreshHash)) return;
  const sinceRotationMs = presentedAt.getTime() - rotated.rotatedAt.getTime();
  if (sinceRotationMs <= 0 || sinceRotationMs < (deps.refreshReuseGraceS ?? 0) * 1000) return;
  const ended = db.$with('ended').as(db.delete(sessions).where(eq(sessions.id, rotated.sessionId)).returning({ id: sessions.id, userId: sessions.userId, publicId: sessions.publicId }));
  const events = accountEventRows(db, deps.now(), sessionsEnded(sql`select user_id, public_id from ${ended}`, 'reuse_detected'));
  const [revoked] = await db.with(ended, ...events).select({ id: ended.id, userId: ended.userId, publicId: ended.publicId }).from(ended);
  if (revoked) {
    logger.warn({ sessionId: revoked.id, userId: revoked.userId }, 'rotated refresh token presented again; session revoked');
    deps.onRefreshReuse?.({ userId: revoked.userId, sessionPublicId: revoked.publicId }, client);
  }
}
