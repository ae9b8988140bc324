// Signing keys with a moved clock, on the real database (PGlite, and PostgreSQL in the postgres
// project): first start, rotation (published a lead time before it signs), retirement (after the last
// token of the old key expired), instances sharing keys, the private key sealed at rest.
import { decodeProtectedHeader } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SigningKeys } from '../../src/accounts/sessions/signing-keys.js';
import type { Database } from '../../src/db/client.js';
import { signingKeys } from '../../src/db/schema.js';
import { createLogger } from '../../src/logger.js';
import { AuthKeys } from '../../src/secrets/auth-key.js';
import { appWith, buildTestApp, openTestDatabase, TEST_AUTH_KEY_SECRET, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register } from './helpers.js';

const TTL_S = 600;
const DAY_MS = 86_400_000;
const logger = createLogger({ level: 'silent' });

describe('the key schedule', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let clockMs = Date.UTC(2030, 0, 1);
  const now = () => new Date(clockMs);
  const ring = (secret = TEST_AUTH_KEY_SECRET) => new SigningKeys({ db: database.db, keys: new AuthKeys(secret), now, logger, accessTokenTtl: TTL_S, rotationDays: 1 });
  beforeAll(async () => {
    ({ database, drop } = await openTestDatabase());
  }, APP_TIMEOUT);
  afterAll(async () => {
    await database.close();
    await drop();
  }, APP_TIMEOUT);

  it('makes one first key however many instances start at once, and it signs at once', async () => {
    const instances = Array.from({ length: 4 }, () => ring());
    await Promise.all(instances.map((r) => r.refresh()));
    const rows = await database.db.select().from(signingKeys);
    expect(rows).toHaveLength(1);
    for (const r of instances) expect((await r.signer()).kid).toBe(rows[0]!.kid);
    const { keys } = await instances[0]!.jwks();
    expect(keys.map((k) => k.kid)).toEqual([rows[0]!.kid]);
    // The private key is stored sealed: not the PKCS#8 DER, not a JWK `d`.
    expect(rows[0]!.privateKey).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(rows[0]!.publicJwk).not.toContain('"d"');
  });

  it('publishes the next key a lead time before it signs, and retires the old one once its last token expired', async () => {
    const a = ring();
    const b = ring();
    const first = (await a.signer()).kid;
    const start = (await database.db.select().from(signingKeys))[0]!.signFrom.getTime();

    // One lead time (the access-token lifetime) before the period ends: the next key appears.
    clockMs = start + DAY_MS - TTL_S * 1000 + 1000;
    const published = await a.jwks();
    expect(published.keys).toHaveLength(2);
    const next = published.keys[1]!.kid;
    expect((await a.signer()).kid).toBe(first);
    // Another instance sees the same keys and keeps signing with the same one.
    expect((await b.jwks()).keys.map((k) => k.kid)).toEqual([first, next]);
    expect((await b.signer()).kid).toBe(first);
    const rows = await database.db.select().from(signingKeys).orderBy(signingKeys.generation);
    expect(rows).toHaveLength(2);
    expect(rows[1]!.signFrom.getTime() - rows[1]!.publishAt.getTime()).toBeGreaterThanOrEqual(TTL_S * 1000 - 1000);

    // The period is over: the next key signs; the old one stays published for the tokens it signed.
    clockMs = start + DAY_MS + 1000;
    expect((await a.signer()).kid).toBe(next);
    expect((await b.signer()).kid).toBe(next);
    expect((await a.jwks()).keys.map((k) => k.kid)).toEqual([first, next]);
    expect(await a.verificationKey(first)).toBeDefined();

    // One token lifetime after the switch, the last token of the old key has expired: it leaves the JWKS and the table.
    clockMs = start + DAY_MS + TTL_S * 1000 + 1000;
    expect((await a.jwks()).keys.map((k) => k.kid)).toEqual([next]);
    expect((await b.jwks()).keys.map((k) => k.kid)).toEqual([next]);
    expect(await a.verificationKey(first)).toBeUndefined();
    expect((await database.db.select().from(signingKeys)).map((r) => r.kid)).toEqual([next]);
  });

  it('refuses to use a key stored under another AUTH_KEY_SECRET, and says so without key material', async () => {
    const other = ring('another-auth-key-secret-0123456789abcdef');
    await expect(other.signer()).rejects.toThrow(/AUTH_KEY_SECRET differs/);
  });
});

describe('rotation through the API, two instances on one database', () => {
  let t: TestApp;
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  beforeAll(async () => {
    t = await buildTestApp({ ACCESS_TOKEN_TTL: String(TTL_S), AUTH_KEY_ROTATION_DAYS: '1' }, { now, areas: { relay: false } });
  }, APP_TIMEOUT);
  afterEach(() => {
    offsetMs = 0;
  });
  afterAll(() => t.close(), APP_TIMEOUT);

  const jwksOf = async (app: TestApp['app']) => ((await (await app.request('/.well-known/jwks.json')).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);

  it('the next key is published before it signs; tokens of the previous key keep working until they expire; both instances agree', async () => {
    const other = appWith(t, { now });
    const user = await register(t.app);
    const firstKid = decodeProtectedHeader(user.tokens.token).kid!;
    expect(await jwksOf(t.app)).toEqual([firstKid]);
    expect(await jwksOf(other)).toEqual([firstKid]);
    // Each instance accepts the other's tokens.
    expectOk(await call(other, 'GET', '/profile', { token: user.tokens.token }));
    const login = await call(other, 'POST', '/login', { body: { account: user.username, password: user.password } });
    expectOk(await call(t.app, 'GET', '/profile', { token: login.body.data.token }));

    // Within the lead time of the period's end: a second key is published on both, and does not sign yet.
    const [row] = await t.database.db.select().from(signingKeys);
    const periodEnd = row!.signFrom.getTime() + DAY_MS;
    offsetMs = periodEnd - TTL_S * 1000 + 5000 - Date.now();
    const published = await jwksOf(t.app);
    expect(published).toHaveLength(2);
    expect(await jwksOf(other)).toEqual(published);
    const nextKid = published[1]!;
    // A minute before the period ends, the first key still signs.
    offsetMs = periodEnd - 60_000 - Date.now();
    const beforeSwitch = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
    expect(decodeProtectedHeader(beforeSwitch.body.data.token).kid).toBe(firstKid);

    // The period is over: both instances sign with the next key, and still accept the previous key's token.
    offsetMs = periodEnd + 30_000 - Date.now();
    const afterSwitch = await call(other, 'POST', '/login', { body: { account: user.username, password: user.password } });
    expect(decodeProtectedHeader(afterSwitch.body.data.token).kid).toBe(nextKid);
    const fromFirst = await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } });
    expect(decodeProtectedHeader(fromFirst.body.data.token).kid).toBe(nextKid);
    expectOk(await call(t.app, 'GET', '/profile', { token: afterSwitch.body.data.token }));
    expectOk(await call(other, 'GET', '/profile', { token: beforeSwitch.body.data.token }));
    expectOk(await call(t.app, 'GET', '/profile', { token: beforeSwitch.body.data.token }));

    // The previous key's last token has expired: it leaves the JWKS; the next key's tokens go on.
    offsetMs = periodEnd + TTL_S * 1000 + 60_000 - Date.now();
    expect(await jwksOf(t.app)).toEqual([nextKid]);
    expect(await jwksOf(other)).toEqual([nextKid]);
    expectError(await call(t.app, 'GET', '/profile', { token: beforeSwitch.body.data.token }), 401, 1002);
    const refreshed = await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: afterSwitch.body.data.refresh_token } });
    expectOk(refreshed);
    expectOk(await call(other, 'GET', '/profile', { token: refreshed.body.data.token }));
  });
});
