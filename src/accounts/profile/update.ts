// PUT /profile's write: only the fields given change. Knows nothing of HTTP.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { users } from '../../db/schema.js';
import { AuthError } from '../shared/auth-error.js';
import type { User } from '../types.js';

export interface ProfileChanges {
  nickname?: string | undefined;
  avatar?: string | undefined;
  gender?: 0 | 1 | 2 | undefined;
  phone?: string | undefined;
}

/** Changes only the fields given; returns the whole user as stored afterwards. */
export async function updateProfile(db: Db, now: Date, userId: number, changes: ProfileChanges): Promise<User> {
  const set = {
    ...(changes.nickname !== undefined && { nickname: changes.nickname }),
    ...(changes.avatar !== undefined && { avatar: changes.avatar }),
    ...(changes.gender !== undefined && { gender: changes.gender }),
    ...(changes.phone !== undefined && { phone: changes.phone }),
  };
  const [user] =
    Object.keys(set).length === 0
      ? await db.select().from(users).where(eq(users.id, userId)).limit(1)
      : await db
          .update(users)
          .set({ ...set, updatedAt: now })
          .where(eq(users.id, userId))
          .returning();
  // The session was valid a moment ago; a user deleted in between reads as a dead token.
  if (!user) throw new AuthError('invalid_access_token');
  return user;
}

