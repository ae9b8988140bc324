// Password hashing: argon2id with the OWASP minimum parameters, through the async API.
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';

// Passed explicitly (not via the `Algorithm` const enum, which breaks isolatedModules):
// algorithm 2 = argon2id, m = 19456 KiB, t = 2, p = 1.
const ARGON2ID = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most this many hashes run at once, so one core stays free for the event loop: argon2 runs on
 * libuv's pool (4 threads by default), and on a 2-core machine four concurrent hashes starve
 * every other request. Further hashes wait their turn in FIFO order.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: Array<() => void> = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

export function hashPassword(password: string): Promise<string> {
  return limited(() => hash(password, ARGON2ID));
}

/** False for a wrong password and for a stored hash that cannot be parsed. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await limited(() => verify(passwordHash, password));
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
  dummyHash ??= hashPassword('dummy password that matches nothing').catch((error: unknown) => {
    dummyHash = undefined;
    throw error;
  });
  await verifyPassword(await dummyHash, password);
  return false;
}
