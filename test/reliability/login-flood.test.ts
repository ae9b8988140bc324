// argon2 work bounded (issue 11, finding 4), against a real server process: a flood of wrong password
// changes from one account does not make another account's login wait behind it, and a flood of logins over
// many accounts meets 503 (code 1005, Retry-After) instead of growing everyone's wait without bound.
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../support/server-process.js';

const MAX_WAIT_MS = 1000;

interface Reply {
  status: number;
  code: number;
  retryAfter: string | undefined;
  ms: number;
  /** performance.now() when the answer was complete. */
  end: number;
}

function send(server: ServerProcess, agent: Agent, method: string, path: string, body: unknown, token?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const started = performance.now();
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
    if (token) headers.authorization = `Bearer ${token}`;
    const req = request(`${server.url}${path}`, { method, agent, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        const end = performance.now();
        resolve({ status: res.statusCode ?? 0, code: JSON.parse(text).code, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, ms: end - started, end });
      });
    });
    req.on('error', reject);
    // A request the server never answers fails here, not at the test's own timeout.
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer within 20 s: ${method} ${path}`)));
    req.end(payload);
  });
}

function get(server: ServerProcess, agent: Agent, path: string, token: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request(`${server.url}${path}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => {
        const end = performance.now();
        resolve({ status: res.statusCode ?? 0, code: JSON.parse(text).code, retryAfter: undefined, ms: end - started, end });
      });
    })
      .on('error', reject)
      .end();
  });
}

async function registerUser(server: ServerProcess, agent: Agent, name: string) {
  const username = `${name}_${Math.random().toString(36).slice(2, 9)}`;
  const payload = { username, email: `${username}@example.com`, password: 'correct-password' };
  const res = await fetch(`${server.url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  const body = (await res.json()) as { code: number; data: { token: string } };
  expect(body.code).toBe(0);
  void agent;
  return { username, token: body.data.token };
}

/**
 * `loops` concurrent loops of `one()` until stop(); resolves with every reply. A flood client whose
 * connection fails (a keep-alive socket the server closed as it was reused, on a loaded machine) is
 * the attacker's loss: it is counted as status 0 and the loop goes on; only answers are judged.
 */
function flood(loops: number, one: (i: number) => Promise<Reply>) {
  let running = true;
  const replies: Reply[] = [];
  const done = Promise.all(
    Array.from({ length: loops }, async (_, i) => {
      while (running) replies.push(await one(i).catch(() => ({ status: 0, code: -1, retryAfter: undefined, ms: 0, end: performance.now() })));
    }),
  );
  return {
    replies,
    async stop() {
      running = false;
      await done;
      return replies;
    },
  };
}

async function legitLogins(server: ServerProcess, agent: Agent, username: string, count: number): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i++) {
    replies.push(await send(server, agent, 'POST', '/api/v1/auth/login', { account: username, password: 'correct-password' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return replies;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('argon2 queue under a flood, real server', () => {
  let server: ServerProcess;
  const agents: Agent[] = [];
  const agent = () => {
    const a = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(a);
    return a;
  };
  beforeAll(async () => {
    // The per-account failure limit off, so the flood reaches the hashing queue.
    server = await startServer({ PASSWORD_HASH_MAX_WAIT_MS: String(MAX_WAIT_MS), LOGIN_FAILURES_PER_ACCOUNT: '0' });
  }, 60_000);
  afterAll(async () => {
    for (const a of agents) a.destroy();
    await server?.stop();
  }, 30_000);

  it('a login of another account waits for the running hash, not for a flood of 24 connections sending wrong password changes of one account', async () => {
    const legit = await registerUser(server, agent(), 'legit');
    const flooder = await registerUser(server, agent(), 'flooder');
    const legitAgent = agent();
    const floodAgents = Array.from({ length: 24 }, () => agent());
    // Baseline under the same machine and event-loop load, minus the hashing: 24 connections reading the profile.
    const reads = flood(24, (i) => get(server, floodAgents[i]!, '/api/v1/auth/profile', flooder.token));
    await sleep(500);
    const baseline = await legitLogins(server, legitAgent, legit.username, 5);
    await reads.stop();
    const changes = flood(24, (i) => send(server, floodAgents[i]!, 'PUT', '/api/v1/auth/password', { old_password: 'wrong-guess', new_password: 'new-password' }, flooder.token));
    await sleep(1000);
    const during = await legitLogins(server, legitAgent, legit.username, 5);
    const floodReplies = await changes.stop();
    const max = (replies: Reply[]) => Math.round(Math.max(...replies.map((r) => r.ms)));
    const byCode = countBy(floodReplies.map((r) => `${r.status}/${r.code}`));
    // The flood's hashes (its 403 answers) that finished while each legitimate login was under way. One
    // FIFO queue made a login wait for every hash queued before it (the flood keeps up to 24 waiting, as
    // many as fit in PASSWORD_HASH_MAX_WAIT_MS); the per-lane queue, for the one running and the few
    // aged past their bound. Counted in hashes, not milliseconds: a loaded machine makes every hash
    // slower (once 1.5 s for one login on CI, where a millisecond bound failed), not the count larger.
    const floodHashesDuring = during.map((login) => floodReplies.filter((r) => r.status === 403 && r.end > login.end - login.ms && r.end <= login.end).length);
    const floodHashes = floodReplies.filter((r) => r.status === 403).length;
    console.log(
      `login max ${max(baseline)} ms during a profile-read flood (baseline); during the password-change flood max ${max(during)} ms, ` +
        `flood hashes finished during each login ${JSON.stringify(floodHashesDuring)}; flood answers ${JSON.stringify(byCode)}`,
    );
    expect(baseline.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    expect(during.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    // The flood was hashing all along (else there was nothing to wait for).
    expect(floodHashes).toBeGreaterThanOrEqual(20);
    expect(Math.max(...floodHashesDuring)).toBeLessThanOrEqual(6);
    // And in time: within the wait bound, with the event loop's own delay on a loaded machine.
    expect(max(during)).toBeLessThan(MAX_WAIT_MS + 1500);
    // The flood got wrong-password answers or 503 busy: never another error.
    expect(Object.keys(byCode).filter((k) => k !== '403/2003' && k !== '503/1005' && k !== '0/-1')).toEqual([]);
  }, 60_000);

  it('a flood of logins over many accounts meets 503/1005 with Retry-After; a legitimate login is answered within the bound', async () => {
    const legit = await registerUser(server, agent(), 'legit2');
    const legitAgent = agent();
    const floodAgents = Array.from({ length: 48 }, () => agent());
    let n = 0;
    const logins = flood(48, (i) => send(server, floodAgents[i]!, 'POST', '/api/v1/auth/login', { account: `nobody_${i}_${n++}`, password: 'guess' }));
    await sleep(1000);
    const during = await legitLogins(server, legitAgent, legit.username, 5);
    const floodReplies = await logins.stop();
    const busy = floodReplies.filter((r) => r.code === 1005);
    const byCode = countBy(floodReplies.map((r) => `${r.status}/${r.code}`));
    console.log(`login during a 48-connection login flood: ${during.map((r) => `${r.code}:${Math.round(r.ms)}ms`).join(' ')}; flood answers ${JSON.stringify(byCode)}`);
    // The issue's rule: the legitimate login stays within the bound, or the flood meets 503s. Which
    // one saturates first depends on the machine: on the embedded database each failed login also
    // writes its audit row, so the database can become the bottleneck before the hash queue does
    // (then no 1005 at all, and the logins below must still be answered in time).
    expect(busy.length > 0 || during.every((r) => r.code === 0 && r.ms < MAX_WAIT_MS + 1500), 'neither 1005 for the flood nor timely logins').toBe(true);
    for (const r of busy) {
      expect(r.status).toBe(503);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(Object.keys(byCode).filter((k) => k !== '401/2004' && k !== '503/1005' && k !== '0/-1')).toEqual([]);
    for (const r of during) {
      expect([0, 1005]).toContain(r.code);
      // Admitted with an expected wait under the bound; allow the event loop's own delay on a loaded machine.
      expect(r.ms).toBeLessThan(MAX_WAIT_MS + 1500);
    }
  }, 60_000);
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
