// The caller's profile: only the fields sent change. Knows nothing of HTTP.
import type { UpdateProfileBody } from './contract.js';
import type { AuthService } from '../sessions/auth-service.js';
import type { Authenticated, User } from '../types.js';

export class ProfileService {
  constructor(private readonly deps: { auth: AuthService }) {}

  update(auth: Authenticated, body: UpdateProfileBody): Promise<User> {
    return this.deps.auth.updateProfile(auth.user.id, { nickname: body.nickname, avatar: body.avatar, gender: body.gender, phone: body.phone });
  }
}
