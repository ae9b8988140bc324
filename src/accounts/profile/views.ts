// Answer shapes, built field by field so no hash or digest can leak; each typed by its output schema in the contract.
import { formatTime } from '../../time.js';
import { sessionUserView } from '../sessions/views.js';
import type { User } from '../types.js';
import type { ProfileView } from './contract.js';
import { userViewFieldValues } from '../vocabulary.js';

/** The session's user and the rest of the profile; the keys in the order the answer has always had. */
export function profileView(user: User): ProfileView {
  const { roles, ...named } = sessionUserView(user);
  return {
    ...named,
    gender: user.gender as ProfileView['gender'],
    phone: user.phone,
    roles,
    created_at: formatTime(user.createdAt),
    ...userViewFieldValues(user),
  };
}
