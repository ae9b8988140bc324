// A distributed login flood (issue 32, finding 13), against a real server process: logins at fresh
// account names, each from a new source address (TRUST_PROXY=xff), so neither the per-client limit
// nor the per-account failure limit stops them and every name is a hashing lane never used before.
// A user who logged in successfully before the flood must still be answered within the documented
// 1.2 s, never with 1005; the flood keeps meeting its own wait bound.
import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../support/server-process.js';

/** The production default of PASSWORD_HASH_MAX_WAIT_MS. */
const MAX_WAIT_MS = 2000;
/** docs/account-api.md, "Password hashing": a known-good account's login under a flood of unknown names. */
const DOCUMENTED_BOUND_MS = 1200;
/** The flood's rate, open loop (requests per 10 ms tick), and most requests in flight (one connection each). */
const FLOOD_PER_TICK = 3;
const FLOOD_MAX_IN_FLIGHT = 400;
/** How long the flood may take to fill the hashing queue past its wait bound before the user comes. */
const FILL_LIMIT_MS = 10_000;
const FLOOD_MAX_SENT = 6000;
const USER_LOGINS = 12;

interface Reply {
  status: number;
  code: number;
  retryAfter: string | undefined;
  ms: number;
}

function login(server: ServerProcess, agent: Agent, account: string, password: string, source: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify({ account, password });
    const started = performance.now();
    const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), 'x-forwarded-for': source };
    const req = request(`${server.url}/api/v1/auth/login`, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { code: number }).code, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, ms: performance.now() - started });
      });
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    req.end(payload);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A new IPv4 source for each request of the flood: 10.0.0.1, 10.0.0.2, … */
let nextSource = 1;
const freshSource = () => {
  const n = nextSource++;
  return `10.${(n >> 16) & 0xff}.${(n >> 8) & 0xff}.${n & 0xff}`;
};

describe('a login flood at fresh account names from many addresses, real server', () => {
  it(`a user whose last login succeeded logs in within ${DOCUMENTED_BOUND_MS} ms (median and max), never 1005; the flood meets 1005 and its own bound`, async () => {
    const agents: Agent[] = [];
    const agent = () => {
      const a = new Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(a);
      return a;
    };
    let server: ServerProcess | undefined;
    let ticker: NodeJS.Timeout | undefined;
    const floodPending = new Set<Promise<void>>();
    try {
      server = await startServer({
        TRUST_PROXY: 'xff',
        PASSWORD_HASH_MAX_WAIT_MS: String(MAX_WAIT_MS),
        // Production-like limits: each flood request comes from a new address and names a new
        // account, so it passes both; the user's own address stays under its per-client limit.
        RATE_LIMIT_AUTH_PER_MIN: '30',
        LOGIN_FAILURES_PER_ACCOUNT: '10',
      });
      const target = server;
      const userSource = '192.0.2.10';
      const username = `regular_${Math.random().toString(36).slice(2, 9)}`;
      const registered = await fetch(`${target.url}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': userSource },
        body: JSON.stringify({ username, email: `${username}@example.com`, password: 'correct-password' }),
      });
      expect(((await registered.json()) as { code: number }).code).toBe(0);
      const userAgent = agent();
      const idle: Reply[] = [];
      for (let i = 0; i < 3; i++) idle.push(await login(target, userAgent, username, 'correct-password', userSource));
      expect(idle.map((r) => r.code)).toEqual([0, 0, 0]);

      // An open-loop flood, as from many machines: 300 logins a second whatever the answers, each at a
      // new name from a new address; more than the hashing queue holds within its bound, whatever a hash costs here.
      const floodAgent = new Agent({ keepAlive: true, maxSockets: FLOOD_MAX_IN_FLIGHT });
      agents.push(floodAgent);
      const floodReplies: Reply[] = [];
      let sent = 0;
      let inFlight = 0;
      ticker = setInterval(() => {
        for (let k = 0; k < FLOOD_PER_TICK && inFlight < FLOOD_MAX_IN_FLIGHT && sent < FLOOD_MAX_SENT; k++) {
          inFlight += 1;
          const n = sent++;
          // A reused keep-alive socket the loaded server closed is the flood's loss (status 0), not the test's.
          const reply = login(target, floodAgent, `fresh_${n}`, 'guess', freshSource())
            .catch(() => ({ status: 0, code: -1, retryAfter: undefined, ms: 0 }))
            .then((r) => {
              floodReplies.push(r);
              inFlight -= 1;
            });
          floodPending.add(reply);
          void reply.then(() => floodPending.delete(reply));
        }
      }, 10);
      // Let the flood fill the queue before the user comes: until the first 1005 (the queue is past its
      // bound), however fast this machine hashes (a fixed 1.5 s was not enough on a quiet machine: CI of
      // stop 34 saw 418 guesses all hashed within 1.5 s and no 1005).
      const fillStarted = performance.now();
      while (!floodReplies.some((r) => r.code === 1005) && performance.now() - fillStarted < FILL_LIMIT_MS) await sleep(50);
      const fillMs = Math.round(performance.now() - fillStarted);
      const during: Reply[] = [];
      for (let i = 0; i < USER_LOGINS; i++) {
        during.push(await login(target, userAgent, username, 'correct-password', userSource));
        await sleep(150);
      }
      clearInterval(ticker);
      await Promise.all(floodPending);

      const byCode: Record<string, number> = {};
      for (const r of floodReplies) byCode[`${r.status}/${r.code}`] = (byCode[`${r.status}/${r.code}`] ?? 0) + 1;
      const ms = during.map((r) => Math.round(r.ms));
      const hashed = floodReplies.filter((r) => r.status === 401);
      console.log(
        `queue past its bound after ${fillMs} ms of flood; user's logins idle: ${idle.map((r) => Math.round(r.ms)).join(' ')} ms; during the flood: ${during.map((r) => `${r.code}:${Math.round(r.ms)}`).join(' ')} ms ` +
          `(median ${median(ms)}, max ${Math.max(...ms)}); flood answers ${JSON.stringify(byCode)}, slowest hashed ${Math.round(Math.max(0, ...hashed.map((r) => r.ms)))} ms`,
      );
      // The flood did fill the hashing queue (else this test shows nothing) and was answered only as expected.
      expect(byCode['503/1005'] ?? 0).toBeGreaterThan(0);
      expect(hashed.length).toBeGreaterThan(10);
      expect(Object.keys(byCode).filter((k) => k !== '401/2004' && k !== '503/1005' && k !== '0/-1')).toEqual([]);
      // Its admitted guesses still meet the wait bound (a waiter kept twice its bound is refused, never kept longer).
      expect(Math.max(...hashed.map((r) => r.ms))).toBeLessThan(2 * MAX_WAIT_MS + 1500);
      // The user: every login succeeded, none answered busy, median and slowest within the documented bound.
      expect(during.map((r) => r.code)).toEqual(Array<number>(USER_LOGINS).fill(0));
      expect(median(ms)).toBeLessThan(DOCUMENTED_BOUND_MS);
      expect(Math.max(...ms)).toBeLessThan(DOCUMENTED_BOUND_MS);
    } finally {
      clearInterval(ticker);
      await Promise.allSettled(floodPending);
      for (const a of agents) a.destroy();
      await server?.stop();
    }
  }, 90_000);
});
