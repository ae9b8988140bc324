// Access tokens as JWTs: a second party verifies them from the running service's JWKS (jose's
// createRemoteJWKSet and fast-jwt, over real HTTP); forged ones are refused by our API with 1002;
// introspection (RFC 7662); and sessions of the previous release (opaque tokens) keep working.
import { createPublicKey, createSecretKey, generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createSigner, createVerifier } from 'fast-jwt';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JWK, type JWTHeaderParameters } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users, sessions } from '../../src/db/schema.js';
import { issueToken } from '../../src/accounts/sessions/tokens.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register } from './helpers.js';
import { eq } from 'drizzle-orm';

const ISSUER = 'https://chat.example.test';
const AUDIENCE = 'chat-services';
const TTL = 600;

let t: TestApp;
let server: ServerType;
let base: string;
beforeAll(async () => {
  t = await buildTestApp({ ACCESS_TOKEN_TTL: String(TTL), AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE }, { areas: { relay: false } });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, APP_TIMEOUT);
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
}, APP_TIMEOUT);

const profile = (token: string) => call(t.app, 'GET', '/profile', { token });

async function jwks(): Promise<{ keys: JWK[] }> {
  const res = await fetch(`${base}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  return (await res.json()) as { keys: JWK[] };
}

function introspect(body: string, contentType = 'application/json') {
  return t.app.request('/internal/v1/auth/introspect', { method: 'POST', headers: { 'X-Internal-Token': t.internalToken, 'content-type': contentType }, body });
}

describe('the JWKS', () => {
  it('lists the Ed25519 public key with its kid, public, cached for less than the lead time of a new key', async () => {
    const res = await fetch(`${base}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1]);
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    expect(maxAge).toBeLessThan(TTL);
    const { keys } = (await res.json()) as { keys: JWK[] };
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(JSON.stringify(key)).not.toMatch(/"d"/);
    }
  });
});

describe('a second party verifies access tokens locally', () => {
  it('with jose createRemoteJWKSet: header and claims as documented', async () => {
    const user = await register(t.app);
    const remote = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(user.tokens.token, remote, { algorithms: ['EdDSA'], issuer: ISSUER, audience: AUDIENCE });
    expect(protectedHeader.alg).toBe('EdDSA');
    expect((await jwks()).keys.map((k) => k.kid)).toContain(protectedHeader.kid);
    expect(payload).toMatchObject({ iss: ISSUER, aud: AUDIENCE, sub: String(user.id), roles: ['user'] });
    expect(payload.sid).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.exp! - payload.iat!).toBe(TTL);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(60);
    // sid is the session's public id as GET /sessions lists it.
    const listed = await call(t.app, 'GET', '/sessions', { token: user.tokens.token });
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(payload.sid);
  });

  it('with fast-jwt, an independent library, from the key in the JWKS', async () => {
    const user = await register(t.app);
    const { kid } = decodeProtectedHeader(user.tokens.token);
    const jwk = (await jwks()).keys.find((k) => k.kid === kid)!;
    const pem = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString();
    const verify = createVerifier({ key: pem, algorithms: ['EdDSA'], allowedIss: ISSUER, allowedAud: AUDIENCE, complete: false });
    const payload = verify(user.tokens.token) as Record<string, unknown>;
    expect(payload).toMatchObject({ iss: ISSUER, aud: AUDIENCE, sub: String(user.id), roles: ['user'] });
    // And fast-jwt refuses a token whose signature was altered.
    const [h, p, s] = user.tokens.token.split('.') as [string, string, string];
    expect(() => verify(`${h}.${p}.${s.slice(0, 4)}${s[4] === 'A' ? 'B' : 'A'}${s.slice(5)}`)).toThrow();
  });

  it('refresh returns a JWT too, and the replaced one stops working here at once', async () => {
    const user = await register(t.app);
    const refreshed = await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: user.tokens.refresh_token } });
    expectOk(refreshed);
    expect(decodeJwt(refreshed.body.data.token).sid).toBe(decodeJwt(user.tokens.token).sid);
    expectOk(await profile(refreshed.body.data.token));
    expectError(await profile(user.tokens.token), 401, 1002);
  });
});

describe('forged or foreign tokens are refused with 1002', () => {
  let user: Awaited<ReturnType<typeof register>>;
  let claims: Record<string, unknown>;
  let kid: string;
  beforeAll(async () => {
    user = await register(t.app);
    claims = decodeJwt(user.tokens.token);
    kid = decodeProtectedHeader(user.tokens.token).kid!;
  });
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const withClaims = async (changes: Record<string, unknown>, key = generateKeyPairSync('ed25519').privateKey, header: JWTHeaderParameters = { alg: 'EdDSA', kid }) =>
    new SignJWT({ ...claims, ...changes }).setProtectedHeader(header).sign(key);

  it('the real token works (the baseline of the cases below)', async () => {
    expectOk(await profile(user.tokens.token));
  });

  it('a tampered payload (the signature no longer matches)', async () => {
    const [h, , s] = user.tokens.token.split('.') as [string, string, string];
    expectError(await profile(`${h}.${b64({ ...claims, sub: '1', roles: ['admin'] })}.${s}`), 401, 1002);
  });

  it('alg none', async () => {
    expectError(await profile(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`), 401, 1002);
    expectError(await profile(`${b64({ alg: 'none', kid })}.${b64(claims)}.x`), 401, 1002);
  });

  it('HS256 signed with the public key (algorithm confusion)', async () => {
    const jwk = (await jwks()).keys.find((k) => k.kid === kid)!;
    for (const secret of [Buffer.from(jwk.x!, 'base64url'), Buffer.from(JSON.stringify(jwk)), createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'spki' })]) {
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(createSecretKey(Buffer.from(secret)));
      expectError(await profile(forged), 401, 1002);
      const fastForged = createSigner({ key: Buffer.from(secret).toString('utf8'), algorithm: 'HS256', kid })(claims);
      expectError(await profile(fastForged), 401, 1002);
    }
  });

  it('an unknown kid, and another key under our kid', async () => {
    expectError(await profile(await withClaims({}, undefined, { alg: 'EdDSA', kid: 'not-a-key-of-ours' })), 401, 1002);
    expectError(await profile(await withClaims({}, undefined, { alg: 'EdDSA' })), 401, 1002);
    expectError(await profile(await withClaims({})), 401, 1002);
  });

  it('another issuer or audience, and expired (each signed with our own key, so only the claim is wrong)', async () => {
    // Our key, from the database, so that the signature is right and the claim alone is refused.
    const ring = t.composition.accounts!.signingKeys;
    const { privateKey } = await ring.signer();
    const ours = (changes: Record<string, unknown>) => withClaims(changes, privateKey);
    expectOk(await profile(await ours({})));
    expectError(await profile(await ours({ iss: 'https://elsewhere.example' })), 401, 1002);
    expectError(await profile(await ours({ aud: 'another-service' })), 401, 1002);
    const past = Math.floor(Date.now() / 1000) - 2 * TTL;
    expectError(await profile(await ours({ iat: past, exp: past + TTL })), 401, 1002);
    expectError(await profile(await ours({ exp: undefined })), 401, 1002);
    expectError(await profile(await ours({ sid: '00000000-0000-4000-8000-000000000000' })), 401, 1002);
  });
});

describe('introspection (RFC 7662)', () => {
  it('answers an active token in JSON and in the form body, with the documented members', async () => {
    const user = await register(t.app);
    const payload = decodeJwt(user.tokens.token);
    for (const res of [await introspect(JSON.stringify({ token: user.tokens.token })), await introspect(`token=${encodeURIComponent(user.tokens.token)}&token_type_hint=access_token`, 'application/x-www-form-urlencoded')]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        active: true,
        sub: String(user.id),
        sid: payload.sid,
        username: user.username,
        roles: ['user'],
        exp: payload.exp,
        iat: payload.iat,
        iss: ISSUER,
        aud: AUDIENCE,
        token_type: 'access_token',
      });
    }
  });

  it('answers active: false for unknown, malformed, refresh and logged-out tokens, at once', async () => {
    const user = await register(t.app);
    for (const token of ['x', 'a.b.c', user.tokens.refresh_token, `${user.tokens.token}x`, issueToken().token]) {
      const res = await introspect(JSON.stringify({ token }));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ active: false });
    }
    expectOk(await call(t.app, 'POST', '/logout', { token: user.tokens.token }));
    expect(await (await introspect(JSON.stringify({ token: user.tokens.token }))).json()).toEqual({ active: false });
  });

  it('needs the internal token and a token parameter', async () => {
    const res = await t.app.request('/internal/v1/auth/introspect', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"x"}' });
    expect(res.status).toBe(401);
    for (const [body, type] of [['{}', 'application/json'], ['', 'application/x-www-form-urlencoded'], ['token=x', 'text/plain'], [JSON.stringify({ token: 'x'.repeat(5000) }), 'application/json']] as const) {
      const bad = await introspect(body, type);
      expect(bad.status, `${type} ${body.slice(0, 20)}`).toBe(400);
      expect(((await bad.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('sessions of the previous release (opaque access tokens)', () => {
  it('keep working until they expire; their refresh token returns a JWT', async () => {
    const user = await register(t.app);
    // What the previous release wrote: an `<id>.<secret>` access token with only its digest stored.
    const access = issueToken();
    const refresh = issueToken();
    const now = Date.now();
    await t.database.db.insert(sessions).values({
      userId: user.id,
      accessId: access.id,
      accessHash: access.digest,
      accessExpiresAt: new Date(now + TTL * 1000),
      refreshId: refresh.id,
      refreshHash: refresh.digest,
      refreshExpiresAt: new Date(now + 86_400_000),
    });
    expectOk(await profile(access.token));
    const active = (await (await introspect(JSON.stringify({ token: access.token }))).json()) as Record<string, unknown>;
    expect(active).toMatchObject({ active: true, sub: String(user.id), username: user.username, token_type: 'access_token' });
    const refreshed = await call(t.app, 'POST', '/refresh-token', { body: { refresh_token: refresh.token } });
    expectOk(refreshed);
    expect(decodeJwt(refreshed.body.data.token).sub).toBe(String(user.id));
    expectOk(await profile(refreshed.body.data.token));
    expectError(await profile(access.token), 401, 1002);
  });

  it('an expired opaque token is refused', async () => {
    const user = await register(t.app);
    const access = issueToken();
    const refresh = issueToken();
    await t.database.db.insert(sessions).values({
      userId: user.id,
      accessId: access.id,
      accessHash: access.digest,
      accessExpiresAt: new Date(Date.now() - 1000),
      refreshId: refresh.id,
      refreshHash: refresh.digest,
      refreshExpiresAt: new Date(Date.now() + 86_400_000),
    });
    expectError(await profile(access.token), 401, 1002);
    const [row] = await t.database.db.select({ id: users.id }).from(users).where(eq(users.id, user.id));
    expect(row).toBeDefined();
  });
});
