// Password hashing: argon2id with the OWASP minimum parameters (unless the factories are given a cost), through the async API.
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { AuthError } from './shared/auth-error.js';

/** argon2id's cost: memory in KiB, passes, lanes. */
export interface HashCost {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** The OWASP minimum, the cost of every hash unless a factory is given another (tests give a lower one). */
export const PASSWORD_HASH_COST: HashCost = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

// The algorithm passed explicitly (not via the `Algorithm` const enum, which breaks isolatedModules): 2 = argon2id.
const ARGON2ID = 2;

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
 *
 * Lanes whose last verification succeeded (a real user who logged in lately) form a second class,
 * served in turn with all the others: a flood of fresh lanes (guesses at new account names, each
 * lane used once and so as light as a real user's) takes at most every other slot from them, and
 * their expected wait counts only their own class and that turn, not the whole flood.
 */
export interface HashOptions {
  lane: string;
  /** Expected wait for a slot beyond which the hash is refused with AuthError `server_busy`. */
  maxWaitMs: number;
  /** The cost of a new hash (and of the dummy one); PASSWORD_HASH_COST when absent. A verification costs what its stored hash says. */
  cost?: HashCost | undefined;
}

/** For callers that name no lane: one shared lane and the default bound. */
export const SHARED: HashOptions = { lane: '', maxWaitMs: 2000 };

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

/**
 * Lanes whose last verification succeeded, with when (performance.now()): the known-good class.
 * A failed verification takes a lane out, so guesses at a known name earn it no turn beyond the
 * one its owner's success gave; only the password can put it back. At most KNOWN_GOOD_MAX lanes
 * (the least lately confirmed dropped first), each for at most KNOWN_GOOD_TTL_MS.
 */
const knownGood = new Map<string, number>();
const KNOWN_GOOD_MAX = 10_000;
const KNOWN_GOOD_TTL_MS = 24 * 60 * 60 * 1000;
/** The class served last, so that the other goes next when both wait. */
let lastServedKnown = false;

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

function isKnownGood(lane: string, now: number): boolean {
  const at = knownGood.get(lane);
  if (at === undefined) return false;
  if (now - at <= KNOWN_GOOD_TTL_MS) return true;
  knownGood.delete(lane);
  return false;
}

/** Called with the outcome of each verification in `lane`. */
function recordVerification(lane: string, verified: boolean): void {
  // Re-inserted so that the map's order is the order of confirmation: the oldest goes first when full.
  knownGood.delete(lane);
  if (!verified) return;
  knownGood.set(lane, performance.now());
  if (knownGood.size > KNOWN_GOOD_MAX) knownGood.delete(knownGood.keys().next().value!);
}

function busy(maxWaitMs: number): AuthError {
  return new AuthError('server_busy', undefined, Math.max(1, Math.ceil(maxWaitMs / 1000)));
}

/**
 * Hashes that run before one added now to `lane`, as if lanes took turns within its class (each
 * other lane gives at most as many as this one holds before it) and the classes alternated: exact
 * for even lanes, generous to the heaviest.
 */
function hashesAhead(lane: string): number {
  const now = performance.now();
  const known = isKnownGood(lane, now);
  const own = lanes.get(lane)?.length ?? 0;
  let ahead = own;
  let otherClass = 0;
  for (const [name, queue] of lanes) {
    if (name === lane) continue;
    if (isKnownGood(name, now) === known) ahead += Math.min(queue.length, own + 1);
    else otherClass += queue.length;
  }
  return ahead + Math.min(otherClass, ahead + 1);
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

/**
 * The lane whose first waiter gets the next free slot: of the known-good class or of the others,
 * in turn when both wait; within the class, aging first (the lane that began waiting first and
 * whose first waiter is past its bound, so a stream of fresh lanes cannot starve a lane used a
 * moment ago), otherwise the lightest lane.
 */
function nextLane(now: number): string | undefined {
  let anyKnown = false;
  let anyOther = false;
  for (const lane of lanes.keys()) {
    if (isKnownGood(lane, now)) anyKnown = true;
    else anyOther = true;
    if (anyKnown && anyOther) break;
  }
  const known = anyKnown && (!anyOther || !lastServedKnown);
  for (const [lane, queue] of lanes) {
    if (isKnownGood(lane, now) === known && now - queue[0]!.queuedAt > queue[0]!.maxWaitMs) return lane;
  }
  let chosen: string | undefined;
  let lightest = Infinity;
  for (const lane of lanes.keys()) {
    if (isKnownGood(lane, now) !== known) continue;
    const used = usageOf(lane, now);
    if (used < lightest) {
      lightest = used;
      chosen = lane;
    }
  }
  return chosen;
}

/** Hands the freed slot to the first waiter of the next lane; waiters kept twice their bound are answered busy instead. */
function release(): void {
  const now = performance.now();
  for (;;) {
    const chosen = nextLane(now);
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
    lastServedKnown = isKnownGood(chosen, now);
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
  return limited(options, () => hash(password, { algorithm: ARGON2ID, ...(options.cost ?? PASSWORD_HASH_COST) }));
}

/** False for a wrong password and for a stored hash that cannot be parsed; AuthError `server_busy` when the queue is full. */
/**
 * The password_hash of an account without a password (one a provider created): no password matches
 * it, and checking one costs what a real verification does, so timing does not tell.
 */
export const NO_PASSWORD = '!';

export function hasPassword(user: { passwordHash: string }): boolean {
  return user.passwordHash !== NO_PASSWORD;
}

export async function verifyPassword(passwordHash: string, password: string, options: HashOptions = SHARED): Promise<boolean> {
  if (passwordHash === NO_PASSWORD) return verifyAgainstDummy(password, options);
  const verified = await limited(options, async () => {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  });
  recordVerification(options.lane, verified);
  return verified;
}

// Computed once per process and cost, on first use; constants, not state that tests need to reset.
const dummyHashes = new Map<string, Promise<string>>();

/**
 * Spends the same work as verifying a real password, for accounts that do not exist, so the
 * response time does not tell whether an account exists. Always resolves to false.
 */
export async function verifyAgainstDummy(password: string, options: HashOptions = SHARED): Promise<false> {
  const cost = options.cost ?? PASSWORD_HASH_COST;
  const key = `${cost.memoryCost},${cost.timeCost},${cost.parallelism}`;
  let dummyHash = dummyHashes.get(key);
  if (!dummyHash) {
    dummyHash = hashPassword('dummy password that matches nothing', options).catch((error: unknown) => {
      dummyHashes.delete(key);
      throw error;
    });
    dummyHashes.set(key, dummyHash);
  }
  await verifyPassword(await dummyHash, password, options);
  return false;
}
