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
 * Who a hash is for: waiting hashes queue per lane (an account name, a user, a client), and a free
 * slot goes to the waiting lane that was served least lately (its hashes, halved every second). A
 * flood from one lane (wrong password changes of one account, guesses at one name) is then served
 * after every lighter lane: another account's login waits for the hash that is running and its own,
 * not for the flood as in one FIFO queue; and the flood itself meets the wait bound (`maxWaitMs`).
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
  refuse: (error: AuthError) => void;
  queuedAt: number;
  maxWaitMs: number;
}

let running = 0;
/** Lanes with waiters, in the order they began waiting (the tie-break). */
const lanes = new Map<string, Waiter[]>();
/** Hashes served per lane lately, decayed: the lightest waiting lane goes first. */
const usage = new Map<string, { hashes: number; at: number }>();
const USAGE_HALF_LIFE_MS = 1000;
/** Running average of one hash's duration, ms: what a place in the queue costs. Starts at a typical figure. */
let averageHashMs = 60;

function usageOf(lane: string, now: number): number {
  const entry = usage.get(lane);
  return entry ? entry.hashes * 0.5 ** ((now - entry.at) / USAGE_HALF_LIFE_MS) : 0;
}

function recordUse(lane: string, now: number): void {
  usage.set(lane, { hashes: usageOf(lane, now) + 1, at: now });
  if (usage.size > 10_000) {
    for (const [name] of usage) if (usageOf(name, now) < 0.01 && !lanes.has(name)) usage.delete(name);
  }
}

function busy(maxWaitMs: number): AuthError {
  return new AuthError('server_busy', undefined, Math.max(1, Math.ceil(maxWaitMs / 1000)));
}

/**
 * Hashes that run before one added now to `lane`, as if lanes took turns (each other lane gives at
 * most as many as this one holds before it): exact for even lanes, generous to the heaviest.
 */
function hashesAhead(lane: string): number {
  const own = lanes.get(lane)?.length ?? 0;
  let ahead = own;
  for (const [name, queue] of lanes) if (name !== lane) ahead += Math.min(queue.length, own + 1);
  return ahead;
}

/**
 * Throws AuthError `server_busy` when a hash for `lane` would be refused now: lets a request answer
 * 503 before spending database work on an answer it cannot give.
 */
export function ensureHashCapacity(options: HashOptions): void {
  if (running < MAX_CONCURRENT_HASHES) return;
  if (expectedWaitMs(options.lane) > options.maxWaitMs) throw busy(options.maxWaitMs);
}

function expectedWaitMs(lane: string): number {
  return Math.ceil((hashesAhead(lane) + 1) / MAX_CONCURRENT_HASHES) * averageHashMs;
}

function acquire(options: HashOptions): Promise<void> | void {
  if (running < MAX_CONCURRENT_HASHES) {
    running += 1;
    recordUse(options.lane, performance.now());
    return;
  }
  if (expectedWaitMs(options.lane) > options.maxWaitMs) throw busy(options.maxWaitMs);
  return new Promise<void>((start, refuse) => {
    const waiter = { start, refuse, queuedAt: performance.now(), maxWaitMs: options.maxWaitMs };
    const queue = lanes.get(options.lane);
    if (queue) queue.push(waiter);
    else lanes.set(options.lane, [waiter]);
  });
}

/** Hands the freed slot to the first waiter of the lightest lane; waiters kept twice their bound are answered busy instead. */
function release(): void {
  const now = performance.now();
  for (;;) {
    // Aging first: the lane that began waiting first and whose first waiter is past its bound goes
    // next, so a stream of fresh lanes (a flood of new account names, each unused) cannot starve a
    // lane that was used a moment ago. Otherwise the lightest lane.
    let chosen: string | undefined;
    for (const [lane, queue] of lanes) {
      if (now - queue[0]!.queuedAt > queue[0]!.maxWaitMs) {
        chosen = lane;
        break;
      }
    }
    let lightest = Infinity;
    if (chosen === undefined) {
      for (const lane of lanes.keys()) {
        const used = usageOf(lane, now);
        if (used < lightest) {
          lightest = used;
          chosen = lane;
        }
      }
    }
    if (chosen === undefined) {
      running -= 1;
      return;
    }
    const queue = lanes.get(chosen)!;
    const waiter = queue.shift()!;
    if (queue.length === 0) lanes.delete(chosen);
    if (now - waiter.queuedAt > 2 * waiter.maxWaitMs) {
      waiter.refuse(busy(waiter.maxWaitMs));
      continue;
    }
    recordUse(chosen, now);
    waiter.start();
    return;
  }
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
