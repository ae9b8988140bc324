// What a new account a provider made is called: a username and a nickname from the provider's name for the person.
import { randomBytes } from 'node:crypto';

/** A username from the provider's name for the person: letters, digits, underscores; a random suffix from the second try. */
export function usernameFrom(name: string | undefined, attempt: number): string {
  const base = (name ?? '')
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40);
  const stem = base.length >= 3 ? base : `user${base ? `_${base}` : ''}`;
  return attempt === 0 && base.length >= 3 ? stem : `${stem.slice(0, 40)}_${randomBytes(4).toString('hex')}`;
}

export function nicknameFrom(name: string | undefined, username: string): string {
  const trimmed = Array.from((name ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '').trim()).slice(0, 50).join('');
  return trimmed || username;
}

