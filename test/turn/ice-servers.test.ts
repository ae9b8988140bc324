// Issue 28: GET /api/v1/auth/ice-servers for end clients, and for a signaling server the transport
// creation answer's `iceServers` and POST /internal/v1/ice-servers; with TURN unset, nothing changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import { createLogger } from '../../src/logger.js';
import { turnCredential } from '../../src/turn/index.js';
import { call, expectError, register } from '../accounts/helpers.js';
import { buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';

const SECRET = 'ice-servers-test-secret-0123';
const URLS = ['turn:turn.example.com:3478?transport=udp', 'turn:turn.example.com:3478?transport=tcp', 'turns:turn.example.com:443?transport=tcp'];
const TURN_ENV = { TURN_URLS: URLS.join(','), TURN_SECRET: SECRET, TURN_CREDENTIAL_TTL_S: '900' };

const internal = (t: TestApp, method: string, path: string, body?: unknown) =>
  t.app.request(`/internal${path}`, {
    method,
    headers: { 'X-Internal-Token': TEST_INTERNAL_TOKEN, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** The expiry written into a username, and the user key after it. */
function parts(username: string): { expiry: number; key: string } {
  const colon = username.indexOf(':');
  return { expiry: Number(username.slice(0, colon)), key: username.slice(colon + 1) };
}

describe('TURN configured', () => {
  let t: TestApp;
  /** Every log line of the app, at debug level. */
  const lines: string[] = [];
  beforeAll(async () => {
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
    t = await buildTestApp({ ...TURN_ENV, RATE_LIMIT_ICE_SERVERS_PER_MIN: '3', RATE_LIMIT_API_PER_MIN: '100', LOG_LEVEL: 'debug' }, { logger });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    // The secret never reaches a log line, and neither does a credential it signed.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(SECRET);
    for (const credential of handedOut) expect(lines.join('')).not.toContain(credential);
  }, 20_000);
  const handedOut: string[] = [];

  it('GET /ice-servers: the URLs, a credential for the account that expires after TURN_CREDENTIAL_TTL_S', async () => {
    const user = await register(t.app);
    const before = Math.floor(Date.now() / 1000);
    const reply = await call(t.app, 'GET', '/ice-servers', { token: user.tokens.token });
    const after = Math.floor(Date.now() / 1000);
    expect(reply.status).toBe(200);
    expect(reply.body.data.expires_in).toBe(900);
    expect(reply.body.data.ice_servers).toHaveLength(1);
    const [server] = reply.body.data.ice_servers;
    expect(server!.urls).toEqual(URLS);
    const { expiry, key } = parts(server!.username);
    expect(key).toBe(String(user.id));
    expect(expiry).toBeGreaterThanOrEqual(before + 900);
    expect(expiry).toBeLessThanOrEqual(after + 900);
    expect(server!.credential).toBe(turnCredential(SECRET, server!.username));
    expect(JSON.stringify(reply.body)).not.toContain(SECRET);
    handedOut.push(server!.credential);
  });

  it('GET /ice-servers without a valid access token: the usual 401 envelope', async () => {
    expectError(await call(t.app, 'GET', '/ice-servers'), 401, 1002);
    expectError(await call(t.app, 'GET', '/ice-servers', { token: 'not-a-token' }), 401, 1002);
  });

  it('has its own rate limit: beyond it 429, while the rest of the API goes on', async () => {
    const user = await register(t.app);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(t.app, 'GET', '/ice-servers', { token: user.tokens.token })).status);
    // Three a minute per account.
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await call(t.app, 'GET', '/ice-servers', { token: user.tokens.token });
    expectError(limited, 429, 1003);
    expect((await call(t.app, 'GET', '/profile', { token: user.tokens.token })).status).toBe(200);
  });

  // app.request() has no socket: every request below comes from one and the same client address.
  it('requests without a valid access token spend nobody’s budget: 401 every time, and a user behind the same address still gets theirs', async () => {
    for (let i = 0; i < 8; i++) {
      expectError(await call(t.app, 'GET', '/ice-servers'), 401, 1002);
      expectError(await call(t.app, 'GET', '/ice-servers', { token: `forged-${i}` }), 401, 1002);
    }
    const user = await register(t.app);
    for (let i = 0; i < 3; i++) expect((await call(t.app, 'GET', '/ice-servers', { token: user.tokens.token })).status).toBe(200);
    expectError(await call(t.app, 'GET', '/ice-servers', { token: user.tokens.token }), 429, 1003);
  });

  it('the budget is per account: one user spending theirs leaves another’s behind the same address whole', async () => {
    const [greedy, other] = [await register(t.app), await register(t.app)];
    for (let i = 0; i < 3; i++) expect((await call(t.app, 'GET', '/ice-servers', { token: greedy.tokens.token })).status).toBe(200);
    expectError(await call(t.app, 'GET', '/ice-servers', { token: greedy.tokens.token }), 429, 1003);
    for (let i = 0; i < 3; i++) expect((await call(t.app, 'GET', '/ice-servers', { token: other.tokens.token })).status).toBe(200);
    // A token of the limited account still answers 401 when it is not valid: the session is checked first.
    expectError(await call(t.app, 'GET', '/ice-servers', { token: `${greedy.tokens.token}x` }), 401, 1002);
  });

  it('a new transport carries iceServers for appData.userId, else for its own id', async () => {
    const router = (await (await internal(t, 'POST', '/v1/routers', {})).json()) as { id: string };
    const withUser = (await (await internal(t, 'POST', '/v1/transports', { routerId: router.id, direction: 'send', appData: { userId: 'alice' } })).json()) as {
      id: string;
      iceServers: Array<{ urls: string[]; username: string; credential: string }>;
    };
    expect(withUser.iceServers).toHaveLength(1);
    expect(withUser.iceServers[0]!.urls).toEqual(URLS);
    expect(parts(withUser.iceServers[0]!.username).key).toBe('alice');
    expect(withUser.iceServers[0]!.credential).toBe(turnCredential(SECRET, withUser.iceServers[0]!.username));
    handedOut.push(withUser.iceServers[0]!.credential);
    for (const appData of [undefined, { userId: 'not:usable' }, { userId: { nested: true } }]) {
      const res = await internal(t, 'POST', '/v1/transports', { routerId: router.id, direction: 'recv', ...(appData ? { appData } : {}) });
      const transport = (await res.json()) as { id: string; iceServers: Array<{ username: string }> };
      expect(res.status).toBe(201);
      expect(parts(transport.iceServers[0]!.username).key).toBe(transport.id);
    }
    await internal(t, 'DELETE', `/v1/routers/${router.id}`);
  });

  it('POST /internal/v1/ice-servers {userId?} and the typed client', async () => {
    const res = await internal(t, 'POST', '/v1/ice-servers', { userId: 7 });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { iceServers: Array<{ urls: string[]; username: string; credential: string }>; expiresIn: number };
    expect(answer.expiresIn).toBe(900);
    expect(parts(answer.iceServers[0]!.username).key).toBe('7');
    expect(answer.iceServers[0]!.credential).toBe(turnCredential(SECRET, answer.iceServers[0]!.username));
    const relay = createRelayClient({ baseUrl: 'http://relay.test', token: TEST_INTERNAL_TOKEN, fetch: t.app.request });
    const typed = await relay.iceServers({ userId: 'bob' });
    expect(parts(typed.iceServers[0]!.username).key).toBe('bob');
    const anonymous = await relay.iceServers();
    expect(parts(anonymous.iceServers[0]!.username).key).toMatch(/^[A-Za-z0-9_-]{12}$/);
    for (const userId of ['a:b', '', 'x'.repeat(129), -1, 1.5]) {
      const bad = await internal(t, 'POST', '/v1/ice-servers', { userId });
      expect(bad.status, JSON.stringify(userId)).toBe(400);
      expect(((await bad.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
    }
    expect((await internal(t, 'POST', '/v1/ice-servers', { userId: 1, extra: true })).status).toBe(400);
  });
});

describe('TURN not configured: every existing answer unchanged', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  }, 60_000);
  afterAll(() => t?.close(), 20_000);

  it('GET /ice-servers answers an empty list', async () => {
    const user = await register(t.app);
    const reply = await call(t.app, 'GET', '/ice-servers', { token: user.tokens.token });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ ice_servers: [], expires_in: 0 });
  });

  it('a transport answer has no iceServers member; POST /internal/v1/ice-servers gives none', async () => {
    const router = (await (await internal(t, 'POST', '/v1/routers', {})).json()) as { id: string };
    const transport = (await (await internal(t, 'POST', '/v1/transports', { routerId: router.id, direction: 'send', appData: { userId: 'alice' } })).json()) as Record<string, unknown>;
    expect(Object.keys(transport).sort()).toEqual(['direction', 'dtlsParameters', 'iceCandidates', 'iceParameters', 'id', 'routerId']);
    expect(await (await internal(t, 'POST', '/v1/ice-servers', { userId: 'alice' })).json()).toEqual({ iceServers: [], expiresIn: 0 });
    await internal(t, 'DELETE', `/v1/routers/${router.id}`);
  });
});
