// The small pieces on their own: tokens, password hashing, the unique-violation mapping, field messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../../src/accounts/passwords.js';
import { characterCount } from '../../src/accounts/shared/fields.js';
import { registerBody } from '../../src/accounts/sessions/contract.js';
import { uniqueViolation } from '../../src/db/sql.js';
import { digestSecret, issueToken, parseToken, secretMatches } from '../../src/accounts/sessions/tokens.js';
import { users } from '../../src/db/schema.js';
import { describeIssue } from '../../src/accounts/shared/validator.js';
import { openTestDatabase } from '../support/app.js';
import { APP_TIMEOUT, uniqueName } from './helpers.js';

describe('tokens', () => {
  it('issues <id>.<secret> with a 128-bit id and a 256-bit secret, and stores only a hex SHA-256', () => {
    const issued = issueToken();
    const parsed = parseToken(issued.token);
    expect(parsed?.id).toBe(issued.id);
    expect(Buffer.from(parsed!.id, 'base64url')).toHaveLength(16);
    expect(Buffer.from(parsed!.secret, 'base64url')).toHaveLength(32);
    expect(issued.digest).toBe(digestSecret(parsed!.secret));
    expect(issued.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(issued.digest).not.toContain(parsed!.secret);
  });

  it('never repeats', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => issueToken().token));
    expect(tokens.size).toBe(1000);
  });

  it.each(['', 'abc', 'a.b', `${'A'.repeat(22)}.${'B'.repeat(42)}`, `${'A'.repeat(22)}.${'B'.repeat(43)}.x`, `${'A'.repeat(22)}.${'B'.repeat(42)}=`, ` ${issueToken().token}`])(
    'rejects the malformed token %j',
    (token) => {
      expect(parseToken(token)).toBeUndefined();
    },
  );

  it('compares a secret with its stored digest', () => {
    const issued = issueToken();
    const { secret } = parseToken(issued.token)!;
    expect(secretMatches(secret, issued.digest)).toBe(true);
    expect(secretMatches(`${secret.slice(0, -1)}x`, issued.digest)).toBe(false);
    expect(secretMatches(secret, 'not-hex')).toBe(false);
    expect(secretMatches(secret, '')).toBe(false);
  });
});

describe('passwords', () => {
  it('hash with argon2id m=19456 t=2 p=1 and verify', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(hash, 'correct horse')).toBe(true);
    expect(await verifyPassword(hash, 'correct horsE')).toBe(false);
  });

  it('salt every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });

  it('treat an unreadable stored hash as a mismatch', async () => {
    expect(await verifyPassword('not a hash', 'whatever')).toBe(false);
  });

  it('verify against a dummy for unknown accounts and always say no', async () => {
    expect(await verifyAgainstDummy('dummy password that matches nothing')).toBe(false);
    expect(await verifyAgainstDummy('anything')).toBe(false);
  });
});

describe('field rules', () => {
  it('count characters as code points', () => {
    expect(characterCount('abc')).toBe(3);
    expect(characterCount('😀😀')).toBe(2);
    expect(characterCount('密码')).toBe(2);
  });

  it('name the first invalid field in `field: rule` form', () => {
    const result = registerBody.safeParse({ username: 'ok_name', email: 'bad', password: '1' });
    expect(result.success).toBe(false);
    expect(describeIssue(result.error!.issues[0])).toBe('email: a valid e-mail address of at most 254 characters');
  });

  it('say when a field is missing', () => {
    const result = registerBody.safeParse({ email: 'a@b.co', password: 'secret-pw' });
    expect(describeIssue(result.error!.issues[0])).toBe('username: is required');
  });

  it('name an unknown field', () => {
    expect(describeIssue({ code: 'unrecognized_keys', path: [], message: 'x', keys: ['roles'] })).toMatch(/^roles: /);
  });
});

describe('uniqueViolation', () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  beforeAll(async () => {
    db = await openTestDatabase();
  }, APP_TIMEOUT);
  afterAll(async () => {
    await db.database.close();
    await db.drop();
  }, APP_TIMEOUT);

  const insert = (username: string, email: string) =>
    db.database.db.insert(users).values({ username, email, passwordHash: 'x', nickname: username });

  it('names the case-insensitive username index and the e-mail index from the real driver error', async () => {
    const name = uniqueName();
    await insert(name, `${name}@example.com`);
    const byName = await insert(name.toUpperCase(), `${name}.2@example.com`).catch((error: unknown) => error);
    expect(uniqueViolation(byName)).toBe('users_username_lower_key');
    const byEmail = await insert(`${name}_2`, `${name}@example.com`).catch((error: unknown) => error);
    expect(uniqueViolation(byEmail)).toBe('users_email_key');
  });

  it('ignores other errors', () => {
    expect(uniqueViolation(new Error('boom'))).toBeUndefined();
    expect(uniqueViolation({ code: '23503' })).toBeUndefined();
    expect(uniqueViolation(undefined)).toBeUndefined();
  });
});
