// Password hashing: argon2id with the OWASP minimum parameters, through the async API.
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { AuthError } from './errors.js';

// Passed explicitly (not via the `Algorithm` const enum, which breaks isolatedModules):
// algorithm 2 = argon2id, m = 19456 KiB, t = 2, p = 1.
const ARGON2ID = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most this many hashes run at once, so one core stays free for the event loop: argon2 runs on
 * libuv's pool (4 threads by default), and on a 2-core machine four concurrent hashes starve
 * every other request.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);

/**
 * Who a hash is for: waiting hashes queue per lane (an account, a user), and a free slot goes to the
 * lanes in turn. A flood from one lane (wrong password changes of one account, guesses at one
 * account) then delays any other lane by at most one hash per busy lane, instead of by the whole
 * flood as in one FIFO queue; and the flood itself meets the wait bound first (`maxWaitMs`).
 */
export interface HashOptions {
  lane: string;
  /** Expected wait for a slot beyond which the hash is refused with AuthError `server_busy`. */
  maxWaitMs: number;
}

/** For callers that name no lane: one shared lane and the default bound. */
const SHARED: HashOptions = { lane: '', maxWaitMs: 2000 };

interface Waiter {
  start: () => void;
}

let running = 0;
/** Insertion order is the turn order: a lane served goes to the back. */
const lanes = new Map<string, Waiter[]>();
/** Running average of one hash's duration, ms: what a place in the queue costs. Starts at a typical figure. */
let averageHashMs = 60;

/** Hashes that run before one added now to `lane` (round robin: each other lane gives at most as many as this one holds before it). */
function hashesAhead(lane: string): number {
  const own = lanes.get(lane)?.length ?? 0;
  let ahead = own;
  for (const [name, queue] of lanes) if (name !== lane) ahead += Math.min(queue.length, own + 1);
  return ahead;
}

function acquire(options: HashOptions): Promise<void> | void {
  if (running < MAX_CONCURRENT_HASHES) {
    running += 1;
    return;
  }
  const expectedWaitMs = Math.ceil((hashesAhead(options.lane) + 1) / MAX_CONCURRENT_HASHES) * averageHashMs;
  if (expectedWaitMs > options.maxWaitMs) {
    throw new AuthError('server_busy', undefined, Math.max(1, Math.ceil(options.maxWaitMs / 1000)));
  }
  return new Promise<void>((resolve) => {
    const queue = lanes.get(options.lane);
    if (queue) queue.push({ start: resolve });
    else lanes.set(options.lane, [{ start: resolve }]);
  });
}

function release(): void {
  const next = lanes.entries().next();
  if (next.done) {
    running -= 1;
    return;
  }
  const [lane, queue] = next.value;
  const waiter = queue.shift()!;
  lanes.delete(lane);
  if (queue.length > 0) lanes.set(lane, queue);
  waiter.start();
}

async function limited<T>(options: HashOptions, work: () => Promise<T>): Promise<T> {
  await acquire(options);
  const started = performance.now();
  try {
    return await work();
  } finally {
    averageHashMs = averageHashMs * 0.8 + (performance.now() - started) * 0.2;
    release();
  }
}

export function hashPassword(password: string, options: HashOptions = SHARED): Promise<string> {
  return limited(options, () => hash(password, ARGON2ID));
}

/** False for a wrong password and for a stored hash that cannot be parsed; AuthError `server_busy` when the queue is full. */
export async function verifyPassword(passwordHash: string, password: string, options: HashOptions = SHARED): Promise<boolean> {
  return limited(options, async () => {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  });
}

// Computed once per process, on first use; a constant, not state that tests need to reset.
let dummyHash: Promise<string> | undefined;

/**
 * Spends the same work as verifying a real password, for accounts that do not exist, so the
 * response time does not tell whether an account exists. Always resolves to false.
 */
export async function verifyAgainstDummy(password: string, options: HashOptions = SHARED): Promise<false> {
  dummyHash ??= hashPassword('dummy password that matches nothing', options).catch((error: unknown) => {
    dummyHash = undefined;
    throw error;
  });
  await verifyPassword(await dummyHash, password, options);
  return false;
}
