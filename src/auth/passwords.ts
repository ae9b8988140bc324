// Password hashing: argon2id with the OWASP minimum parameters, through the async API.
import { hash, verify } from '@node-rs/argon2';

// Passed explicitly (not via the `Algorithm` const enum, which breaks isolatedModules):
// algorithm 2 = argon2id, m = 19456 KiB, t = 2, p = 1.
const ARGON2ID = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID);
}

/** False for a wrong password and for a stored hash that cannot be parsed. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// Computed once per process, on first use; a constant, not state that tests need to reset.
let dummyHash: Promise<string> | undefined;

/**
 * Spends the same work as verifying a real password, for accounts that do not exist, so the
 * response time does not tell whether an account exists. Always resolves to false.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hash('dummy password that matches nothing', ARGON2ID).catch((error: unknown) => {
    dummyHash = undefined;
    throw error;
  });
  await verifyPassword(await dummyHash, password);
  return false;
}
