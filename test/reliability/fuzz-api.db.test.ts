// Property-based fuzzing of every /api endpoint (fast-check), on PGlite and on PostgreSQL: hostile
// bodies, content types, headers, tokens and paths. Every answer is the envelope with a code the
// endpoint can give, never a 5xx.
// The rate limiter runs on every request (TRUST_PROXY=xff, huge limits) with fuzzed X-Forwarded-For.
import fc from 'fast-check';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_TIMEOUT, register, registerVerified, uniqueName, type Registered } from '../accounts/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { SoftAuthenticator } from '../support/webauthn.js';
import {
  answerOf,
  anyJson,
  anyString,
  authorization,
  contentType,
  corrupted,
  expectApiAnswer,
  expectRelayAnswer,
  FuzzStats,
  fuzzParameters,
  headerValueOf,
  mutated,
  notAnId,
  rawBody,
  requestInit,
  type RawBody,
} from './support/fuzz.js';

const API_LIMIT = 64 * 1024;
const TURN_SECRET = 'fuzz-turn-secret-0123456789abcdef';
/** Forgot-password answers take 250 ms each by design; its run count is capped. */
const FUZZ_RUNS_FORGOT = Math.max(1, Number(process.env.FUZZ_RUNS ?? 60));
const stats = new FuzzStats('/api');
let t: TestApp;
/** The fuzz user; its password and tokens follow what the fuzzed requests changed. */
let owner: Registered & { password: string };
let refreshPair: { token: string; refresh_token: string };
let logoutToken: string;
/** A user with several sessions whose ids the DELETE /sessions/:id fuzz may pick. */
let devicesOwner: Registered;
let deviceIds: string[] = [];
/** Users the account deletion and password reset fuzz may change. */
let deletable: Registered;
let resettable: Registered;
/** The user whose address the e-mail endpoints (issue 31) verify and change. */
let mailOwner: Registered;
/** Issue 31, totp: a user setting TOTP up, and one with TOTP on and a login challenge open. */
let pendingTotp: Registered;
let twoFactor: Registered;
let mfaToken: string;
/** The provider the /oidc endpoints are fuzzed against (an Apple-style issuer on loopback, raw nonces). */
let issuer: TestIssuer;
const OIDC_CLIENT_ID = 'fuzz-client';
const OIDC_RETURN = 'https://app.example.com/signed-in';

beforeAll(async () => {
  issuer = await startTestIssuer();
  t = await buildTestApp({
    OIDC_PROVIDERS: 'acme',
    OIDC_ACME_ISSUER: issuer.issuer,
    OIDC_ACME_CLIENT_ID: OIDC_CLIENT_ID,
    OIDC_REDIRECT_URIS: OIDC_RETURN,
    TRUST_PROXY: 'xff',
    RATE_LIMIT_AUTH_PER_MIN: '1000000',
    RATE_LIMIT_REFRESH_PER_MIN: '1000000',
    RATE_LIMIT_API_PER_MIN: '1000000',
    RATE_LIMIT_ICE_SERVERS_PER_MIN: '1000000',
    // Issue 28: GET /ice-servers hands out TURN credentials.
    TURN_URLS: 'turn:127.0.0.1:3478?transport=udp',
    TURN_SECRET: TURN_SECRET,
  }, { areas: { relay: false } });
  owner = await register(t.app);
  const second = await register(t.app);
  refreshPair = second.tokens;
  logoutToken = (await register(t.app)).tokens.token;
  devicesOwner = await register(t.app);
  for (let i = 0; i < 3; i++) {
    await t.app.request('/api/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': `fuzz-device-${i}` },
      body: JSON.stringify({ account: devicesOwner.username, password: devicesOwner.password }),
    });
  }
  const listed = (await (await t.app.request('/api/v1/auth/sessions', { headers: { authorization: `Bearer ${devicesOwner.tokens.token}` } })).json()) as {
    data: Array<{ id: string; current: boolean }>;
  };
  deviceIds = listed.data.filter((d) => !d.current).map((d) => d.id);
  deletable = await register(t.app);
  resettable = await register(t.app);
  mailOwner = await register(t.app);
  pendingTotp = await registerVerified(t);
  twoFactor = await registerVerified(t);
  const api = async (method: string, path: string, body?: unknown, token?: string) =>
    (await (
      await t.app.request(`/api/v1/auth${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    ).json()) as { code: number; data: Record<string, unknown> };
  const setup = await api('POST', '/mfa/totp/setup', undefined, twoFactor.tokens.token);
  const totp = new TOTP({ secret: Secret.fromBase32(setup.data.secret as string) });
  expect((await api('POST', '/mfa/totp/enable', { code: totp.generate() }, twoFactor.tokens.token)).code).toBe(0);
  const login = await api('POST', '/login', { account: twoFactor.username, password: twoFactor.password });
  expect(login.code).toBe(2007);
  mfaToken = login.data.mfa_token as string;
}, APP_TIMEOUT);

afterAll(async () => {
  console.log(stats.summary());
  await t?.close();
  await issuer?.close();
}, APP_TIMEOUT);

const forwardedFor = fc.oneof(
  fc.constantFrom(undefined, '', ',', ' , ', '203.0.113.9', '198.51.100.1, 203.0.113.9', 'unknown', '::1', '[::1]:443', 'x'.repeat(300)),
  headerValueOf(120),
);

/** Headers besides Authorization and Content-Type that a hostile client may send. */
const extraHeaders = fc.record({
  'x-forwarded-for': forwardedFor,
  'user-agent': fc.option(headerValueOf(1200), { nil: undefined }),
  accept: fc.constantFrom(undefined, 'application/json', 'text/html', '*/*', ''),
});

const query = fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 30 }).map((q) => `?${encodeURIComponent(q)}=${encodeURIComponent(q)}`), fc.constant('?a=1&a=2&__proto__=x'));

interface FuzzRequest {
  method?: string;
  path?: string;
  query: string;
  contentType: string | undefined;
  authorization: string | undefined;
  extra: Record<string, string | undefined>;
  body: RawBody;
}

async function send(method: string, path: string, r: FuzzRequest) {
  const headers = { ...r.extra, 'content-type': r.contentType, authorization: r.authorization };
  const res = await t.app.request(`${path}${r.query}`, requestInit(method, headers, r.body.text));
  const answer = await answerOf(res);
  stats.record(answer.status);
  return answer;
}

function describeRequest(method: string, path: string, r: FuzzRequest): string {
  const body = r.body.text === undefined ? '' : typeof r.body.text === 'string' ? r.body.text.slice(0, 200) : `<${r.body.text.length} bytes>`;
  return `${method} ${path}${r.query.slice(0, 60)} [${r.body.note}, ${r.contentType}] ${body}`;
}

function requests(body: fc.Arbitrary<unknown>, auth: fc.Arbitrary<string | undefined> = authorization()): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    query,
    contentType,
    authorization: auth,
    extra: extraHeaders,
    body: rawBody(body, API_LIMIT),
  });
}

const validUsername = fc.stringMatching(/^[A-Za-z0-9_]{3,50}$/);
const validEmail = fc.oneof(
  fc.emailAddress(),
  fc.tuple(fc.stringMatching(/^[a-z0-9]{1,20}$/), fc.constantFrom('example.com', 'EXAMPLE.COM', 'xn--bcher-kva.example', 'a.b')).map(([l, d]) => `${l}@${d}`),
);
const username = fc.oneof(validUsername, corrupted(validUsername), anyString, anyJson);
const email = fc.oneof(validEmail, corrupted(validEmail), anyString, anyJson);
const nickname = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 50 }), corrupted(fc.string({ unit: 'grapheme', maxLength: 40 })), anyString, anyJson);

/** encodeURIComponent throws on a lone surrogate: replace them as a browser would (U+FFFD). */
const wellFormed = (value: string) => value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

describe('fuzz /api/v1/auth', () => {
  it('POST /register', async () => {
    const valid = () => {
      const name = uniqueName('fz');
      return { username: name, email: `${name}@example.com`, password: 'secret-pw', nickname: 'Nick' };
    };
    const fields = fc.record(
      { username, email, password: fc.oneof(anyString, corrupted(fc.constant('secret-pw')), anyJson), nickname },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields)), async (r) => {
        const a = await send('POST', '/api/v1/auth/register', r);
        expectApiAnswer(a, [0, 1001, 2001, 2002], describeRequest('POST', '/register', r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /login', async () => {
    const valid = () => ({ account: owner.username, password: owner.password });
    const known = fc.constant(null).map(() => owner.username);
    const fields = fc.record(
      { account: fc.oneof(username, email, known, corrupted(known), fc.constant(null).map(() => owner.email.toUpperCase())), password: fc.oneof(anyString, anyJson) },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields)), async (r) => {
        const a = await send('POST', '/api/v1/auth/login', r);
        expectApiAnswer(a, [0, 1001, 2003, 2004], describeRequest('POST', '/login', r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /refresh-token', async () => {
    const token = fc.oneof(
      anyString,
      anyJson,
      fc.tuple(fc.stringMatching(/^[A-Za-z0-9_-]{22}$/), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)).map(([a, b]) => `${a}.${b}`),
      fc.constant(null).map(() => refreshPair.refresh_token),
      fc.tuple(fc.nat(), fc.constantFrom('A', '.', '-', ' ', '\u0000')).map(([at, ch]) => {
        const real = refreshPair.refresh_token;
        return `${real.slice(0, at % real.length)}${ch}${real.slice((at % real.length) + 1)}`;
      }),
    );
    const body = fc.oneof(anyJson, fc.record({ refresh_token: token }, { requiredKeys: [] }), mutated(() => ({ refresh_token: refreshPair.refresh_token })));
    await fc.assert(
      fc.asyncProperty(requests(body), async (r) => {
        const a = await send('POST', '/api/v1/auth/refresh-token', r);
        expectApiAnswer(a, [0, 1001, 1002], describeRequest('POST', '/refresh-token', r));
        if ((a.body as { code: number }).code === 0) refreshPair = (a.body as { data: typeof refreshPair }).data;
      }),
      fuzzParameters(),
    );
  });

  it('POST /logout', async () => {
    await fc.assert(
      fc.asyncProperty(
        requests(anyJson, authorization(() => logoutToken)),
        async (r) => {
          const a = await send('POST', '/api/v1/auth/logout', r);
          // 1001 only for a JSON object whose `scope` is not one of the three.
          expectApiAnswer(a, [0, 1001, 1002], describeRequest('POST', '/logout', r));
        },
      ),
      fuzzParameters(),
    );
  });

  it('POST /logout {scope}', async () => {
    let token = (await register(t.app)).tokens.token;
    const scope = fc.oneof(fc.constantFrom('current', 'others', 'all'), anyString, anyJson);
    const body = fc.oneof(anyJson, fc.record({ scope }, { requiredKeys: [] }), mutated(() => ({ scope: 'others' })));
    await fc.assert(
      fc.asyncProperty(requests(body, fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${token}`), weight: 4 }, authorization(() => token))), async (r) => {
        const a = await send('POST', '/api/v1/auth/logout', r);
        expectApiAnswer(a, [0, 1001, 1002], describeRequest('POST', '/logout', r));
        // Logged out (some scope ended this session): carry on with a fresh one.
        if ((a.body as { code: number }).code === 0) token = (await register(t.app)).tokens.token;
      }),
      fuzzParameters(),
    );
  });

  it('GET /sessions', async () => {
    await fc.assert(
      fc.asyncProperty(requests(anyJson, authorization(() => devicesOwner.tokens.token)), async (r) => {
        const a = await send('GET', '/api/v1/auth/sessions', r);
        expectApiAnswer(a, [0, 1002], describeRequest('GET', '/sessions', r));
        const body = a.body as { code: number; data: unknown[] };
        if (body.code === 0) expect(body.data.length).toBeGreaterThanOrEqual(1);
      }),
      fuzzParameters(),
    );
  });

  it('DELETE /sessions/:id: only the caller\'s own sessions end', async () => {
    const id = fc.oneof(
      notAnId,
      fc.uuid(),
      fc.constant(null).map(() => deviceIds[0] ?? 'gone'),
      fc.constant(null).map(() => owner.tokens.token.split('.')[1]!.slice(0, 36)),
    );
    await fc.assert(
      fc.asyncProperty(id, requests(anyJson, fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${devicesOwner.tokens.token}`), weight: 3 }, authorization(() => devicesOwner.tokens.token))), async (sessionId, r) => {
        const a = await send('DELETE', `/api/v1/auth/sessions/${sessionId}`, r);
        const what = describeRequest('DELETE', `/sessions/${sessionId.slice(0, 80)}`, r);
        expectApiAnswer(a, [0, 1002, 1004], what);
        if ((a.body as { code: number }).code === 0) {
          expect(deviceIds, what).toContain(sessionId);
          deviceIds = deviceIds.filter((d) => d !== sessionId);
        }
      }),
      fuzzParameters(),
    );
    // The caller's own session never ended through a foreign or malformed id.
    const profile = await t.app.request('/api/v1/auth/profile', { headers: { authorization: `Bearer ${owner.tokens.token}` } });
    expect(((await profile.json()) as { code: number }).code).toBe(0);
  });

  it('DELETE /account', async () => {
    const valid = () => ({ password: deletable.password });
    const fields = fc.record({ password: fc.oneof(anyString, anyJson, fc.constantFrom('', 'x'.repeat(1025), 'x'.repeat(20000))) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(
        requests(fc.oneof(anyJson, fields, { arbitrary: mutated(valid), weight: 1 }), fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${deletable.tokens.token}`), weight: 4 }, authorization(() => deletable.tokens.token))),
        async (r) => {
          const a = await send('DELETE', '/api/v1/auth/account', r);
          expectApiAnswer(a, [0, 1001, 1002, 2003], describeRequest('DELETE', '/account', r));
          if ((a.body as { code: number }).code === 0) deletable = await register(t.app);
        },
      ),
      fuzzParameters(),
    );
  });

  it('POST /password/forgot (answers padded to 250 ms, so fewer runs)', async () => {
    const valid = () => ({ email: resettable.email });
    const fields = fc.record({ email: fc.oneof(email, fc.constant(null).map(() => resettable.email.toUpperCase())) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields)), async (r) => {
        const a = await send('POST', '/api/v1/auth/password/forgot', r);
        expectApiAnswer(a, [0, 1001], describeRequest('POST', '/password/forgot', r));
      }),
      fuzzParameters(Math.min(FUZZ_RUNS_FORGOT, 60)),
    );
  });

  it('POST /password/reset', async () => {
    const valid = () => ({ email: resettable.email, code: '123456', new_password: 'a brand new pass' });
    const fields = fc.record(
      {
        email: fc.oneof(email, fc.constant(null).map(() => resettable.email)),
        code: fc.oneof(fc.stringMatching(/^[0-9]{6}$/), corrupted(fc.stringMatching(/^[0-9]{6}$/)), anyString, anyJson),
        new_password: fc.oneof(anyString, anyJson, fc.constantFrom('password1', '123456')),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields)), async (r) => {
        const a = await send('POST', '/api/v1/auth/password/reset', r);
        expectApiAnswer(a, [0, 1001, 2005], describeRequest('POST', '/password/reset', r));
      }),
      fuzzParameters(),
    );
  });

  // Issue 31: verified e-mail and changing the address (mail goes to the log here: no SMTP_URL).
  const sixDigits = fc.stringMatching(/^[0-9]{6}$/);
  const codeBody = fc.oneof(anyJson, mutated(() => ({ code: '123456' })), fc.record({ code: fc.oneof(sixDigits, corrupted(sixDigits), anyString, anyJson) }, { requiredKeys: [] }));
  const asMailOwner = () => fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${mailOwner.tokens.token}`), weight: 4 }, authorization(() => mailOwner.tokens.token));

  it('POST /email/verify', async () => {
    await fc.assert(
      fc.asyncProperty(requests(codeBody, asMailOwner()), async (r) => {
        const a = await send('POST', '/api/v1/auth/email/verify', r);
        expectApiAnswer(a, [0, 1001, 1002, 2008, 2009], describeRequest('POST', '/email/verify', r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /email/verify/resend', async () => {
    await fc.assert(
      fc.asyncProperty(requests(anyJson, asMailOwner()), async (r) => {
        const a = await send('POST', '/api/v1/auth/email/verify/resend', r);
        // 1003 once the account's 5 codes of the hour are spent.
        expectApiAnswer(a, [0, 1002, 1003, 2009], describeRequest('POST', '/email/verify/resend', r));
      }),
      fuzzParameters(),
    );
  });

  it('PUT /email', async () => {
    const valid = () => ({ new_email: `${uniqueName('fzm')}@example.org`, password: mailOwner.password });
    const fields = fc.record(
      {
        new_email: fc.oneof(email, fc.constant(null).map(() => owner.email), fc.constant(null).map(() => mailOwner.email.toUpperCase())),
        password: fc.oneof(fc.constant(null).map(() => mailOwner.password), anyString, anyJson, fc.constantFrom('', 'x'.repeat(1025), 'x'.repeat(20000))),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields), asMailOwner()), async (r) => {
        const a = await send('PUT', '/api/v1/auth/email', r);
        expectApiAnswer(a, [0, 1001, 1002, 1003, 2003, 2010, 2017], describeRequest('PUT', '/email', r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /email/confirm', async () => {
    await fc.assert(
      fc.asyncProperty(requests(codeBody, asMailOwner()), async (r) => {
        const a = await send('POST', '/api/v1/auth/email/confirm', r);
        expectApiAnswer(a, [0, 1001, 1002, 2002, 2008], describeRequest('POST', '/email/confirm', r));
      }),
      fuzzParameters(),
    );
    // The owner's session survived every guess.
    const profile = await t.app.request('/api/v1/auth/profile', { headers: { authorization: `Bearer ${mailOwner.tokens.token}` } });
    expect(((await profile.json()) as { code: number }).code).toBe(0);
  });

  // issue 31, totp
  const totpCode = fc.oneof(fc.stringMatching(/^[0-9]{6}$/), corrupted(fc.stringMatching(/^[0-9]{6}$/)), anyString, anyJson);
  const recoveryCode = fc.oneof(fc.stringMatching(/^[0-9a-z]{5}-[0-9a-z]{5}$/), anyString, anyJson);

  it('POST /mfa/totp/setup and /mfa/totp/enable', async () => {
    const bearer = fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${pendingTotp.tokens.token}`), weight: 4 }, authorization(() => pendingTotp.tokens.token));
    await fc.assert(
      fc.asyncProperty(requests(anyJson, bearer), async (r) => {
        const a = await send('POST', '/api/v1/auth/mfa/totp/setup', r);
        expectApiAnswer(a, [0, 1002, 2011, 2017], describeRequest('POST', '/mfa/totp/setup', r));
      }),
      fuzzParameters(),
    );
    const fields = fc.record({ code: totpCode }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, fields, mutated(() => ({ code: '123456' }))), bearer), async (r) => {
        const a = await send('POST', '/api/v1/auth/mfa/totp/enable', r);
        expectApiAnswer(a, [0, 1001, 1002, 2011, 2013, 2017], describeRequest('POST', '/mfa/totp/enable', r));
      }),
      fuzzParameters(),
    );
  });

  it('DELETE /mfa/totp', async () => {
    const valid = () => ({ password: twoFactor.password, code: '123456' });
    const fields = fc.record(
      { password: fc.oneof(anyString, anyJson, fc.constant(null).map(() => twoFactor.password), fc.constantFrom('', 'x'.repeat(1025))), code: fc.oneof(totpCode, recoveryCode) },
      { requiredKeys: [] },
    );
    const bearer = fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${twoFactor.tokens.token}`), weight: 4 }, authorization(() => twoFactor.tokens.token));
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields), bearer), async (r) => {
        const a = await send('DELETE', '/api/v1/auth/mfa/totp', r);
        expectApiAnswer(a, [0, 1001, 1002, 2003, 2011, 2013], describeRequest('DELETE', '/mfa/totp', r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /reauth', async () => {
    const valid = () => ({ password: twoFactor.password });
    const fields = fc.record(
      {
        password: fc.oneof(anyString, anyJson, fc.constant(null).map(() => twoFactor.password), fc.constantFrom('', 'x'.repeat(1025))),
        totp_code: totpCode,
        recovery_code: recoveryCode,
        passkey: anyJson,
      },
      { requiredKeys: [] },
    );
    const bearer = fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${twoFactor.tokens.token}`), weight: 4 }, authorization(() => twoFactor.tokens.token));
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields), bearer), async (r) => {
        const a = await send('POST', '/api/v1/auth/reauth', r);
        expectApiAnswer(a, [0, 1001, 1002, 1003, 2003, 2013, 2014], describeRequest('POST', '/reauth', r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /login/mfa', async () => {
    const valid = () => ({ mfa_token: mfaToken, code: '123456' });
    const fields = fc.record(
      { mfa_token: fc.oneof(fc.constant(null).map(() => mfaToken), corrupted(fc.constant(null).map(() => mfaToken)), anyString, anyJson), code: totpCode, recovery_code: recoveryCode },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(valid), fields)), async (r) => {
        const a = await send('POST', '/api/v1/auth/login/mfa', r);
        expectApiAnswer(a, [0, 1001, 2012, 2013], describeRequest('POST', '/login/mfa', r));
      }),
      fuzzParameters(),
    );
  });

  it('GET /internal/v1/auth-events', async () => {
    const names = fc.constantFrom('userId', 'type', 'since', 'limit', 'cursor', 'other', '__proto__', '');
    const value = fc.oneof(
      anyString,
      fc.constantFrom('1', '0', '-1', '200', '201', '1e3', 'login_failed', 'registered', 'password_reset_failed', 'password_change_failed', 'account_deletion_failed', 'password_reset_failedx', '2025-01-01 08:00:00', '2025-01-01T00:00:00Z', 'ZTE', 'ZTA', 'x'.repeat(3000)),
      fc.integer().map(String),
    );
    const encoded = fc.array(fc.tuple(names, value), { maxLength: 6 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(wellFormed(v))}`).join('&')}`));
    const raw = fc.constantFrom('?userId=%zz', '?%', '?type=%00', '?since=%E0%A4%A', '?limit=1&limit=2', '?cursor=', '?userId=', '?&&&', '?userId=1%00', `?since=${'9'.repeat(3000)}`);
    const query = fc.oneof({ arbitrary: encoded, weight: 5 }, raw);
    const token = fc.oneof({ arbitrary: fc.constant(t.internalToken), weight: 6 }, fc.constantFrom(undefined, '', 'wrong'), headerValueOf(200));
    await fc.assert(
      fc.asyncProperty(query, token, async (q, internal) => {
        const res = await t.app.request(`/internal/v1/auth-events${q}`, { headers: internal === undefined ? {} : { 'X-Internal-Token': internal } });
        const a = await answerOf(res);
        stats.record(a.status);
        const what = `GET /internal/v1/auth-events${q.slice(0, 200)} token=${internal === t.internalToken ? 'valid' : String(internal).slice(0, 20)}`;
        expectRelayAnswer(a, 200, ['VALIDATION_ERROR'], what);
        if (a.status === 200) {
          const body = a.body as { events: unknown[]; next_cursor: unknown };
          expect(Array.isArray(body.events) && body.events.length <= 200, what).toBe(true);
        }
      }),
      fuzzParameters(),
    );
  });

  it('POST /internal/v1/auth/introspect (JSON or form; active only for a live token)', async () => {
    const live = () => owner.tokens.token;
    const tokenValue = fc.oneof(fc.constant(null).map(live), corrupted(fc.constant(null).map(live)), anyString, anyJson, fc.constant('x'.repeat(5000)));
    const jsonBody = fc.oneof(anyJson, fc.record({ token: tokenValue, token_type_hint: fc.oneof(anyString, fc.constant('access_token')) }, { requiredKeys: [] }));
    // A JSON token is written as its JSON text: String() throws on an object whose toString is a number.
    const formBody = fc.tuple(tokenValue, anyString).map(([token, extra]) => `token=${encodeURIComponent(wellFormed(typeof token === 'string' ? token : String(JSON.stringify(token))))}&${encodeURIComponent(wellFormed(extra))}=1`);
    const body = fc.oneof(
      jsonBody.map((b) => ({ type: 'application/json', text: JSON.stringify(b) ?? 'null' })),
      formBody.map((text) => ({ type: 'application/x-www-form-urlencoded', text })),
      fc.tuple(contentType, anyString).map(([type, text]) => ({ type, text })),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await t.app.request('/internal/v1/auth/introspect', {
          method: 'POST',
          headers: { 'X-Internal-Token': t.internalToken, ...(b.type === undefined ? {} : { 'content-type': b.type }) },
          body: b.text,
        });
        const a = await answerOf(res);
        stats.record(a.status);
        const what = `POST /internal/v1/auth/introspect [${b.type}] ${b.text.slice(0, 200)}`;
        expectRelayAnswer(a, 200, ['VALIDATION_ERROR'], what);
        if (a.status === 200) {
          const answer = a.body as { active: boolean; sub?: string };
          expect(typeof answer.active, what).toBe('boolean');
          if (answer.active) expect(answer.sub, what).toBe(String(owner.id));
        }
      }),
      fuzzParameters(),
    );
  });

  it('GET /.well-known/jwks.json', async () => {
    await fc.assert(
      fc.asyncProperty(requests(anyJson), async (r) => {
        const a = await send('GET', '/.well-known/jwks.json', r);
        expect(a.status, describeRequest('GET', '/.well-known/jwks.json', r)).toBe(200);
        expect((a.body as { keys: unknown[] }).keys.length).toBeGreaterThanOrEqual(1);
      }),
      fuzzParameters(),
    );
  });

  it('moderation: GET /internal/v1/users(/:id), POST and DELETE /internal/v1/users/:id/ban, DELETE /internal/v1/users/:id/mfa', async () => {
    const target = await register(t.app);
    const id = fc.oneof(notAnId, fc.constant(null).map(() => String(target.id)), fc.constantFrom('0', '-1', '2147483647', '2147483648', '1e3', '%00', '99999999999999999999'), fc.integer({ max: 0 }).map(String), fc.integer({ min: 2_000_000_000 }).map(String));
    // Only the target and ids no user has: the other fuzz users (the owner's tokens) must stay unbanned.
    const names = fc.constantFrom('query', 'cursor', 'limit', 'other', '__proto__', '');
    const value = fc.oneof(anyString, fc.constantFrom('1', '0', '100', '101', '%', '_', '\\', 'dTE', 'dTA', 'x'.repeat(300)), fc.integer().map(String));
    const usersQuery = fc.array(fc.tuple(names, value), { maxLength: 5 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(wellFormed(v))}`).join('&')}`));
    const until = fc.oneof(anyString, anyJson, fc.constantFrom('2099-01-01 00:00:00', '2020-01-01 00:00:00', '2099-02-30 00:00:00', '9999-12-31 23:59:59', '10000-01-01 00:00:00', '2099-01-01T00:00:00Z'));
    const banBody = fc.oneof(anyJson, fc.record({ until, reason: fc.oneof(anyString, anyJson) }, { requiredKeys: [] }));
    const call = fc.oneof(
      usersQuery.map((q) => ({ method: 'GET', path: `/internal/v1/users${q}`, body: undefined as string | undefined })),
      id.map((i) => ({ method: 'GET', path: `/internal/v1/users/${encodeURIComponent(wellFormed(i))}`, body: undefined as string | undefined })),
      fc.tuple(id, banBody).map(([i, b]) => ({ method: 'POST', path: `/internal/v1/users/${encodeURIComponent(wellFormed(i))}/ban`, body: JSON.stringify(b) ?? 'null' })),
      id.map((i) => ({ method: 'DELETE', path: `/internal/v1/users/${encodeURIComponent(wellFormed(i))}/ban`, body: undefined as string | undefined })),
      id.map((i) => ({ method: 'DELETE', path: `/internal/v1/users/${encodeURIComponent(wellFormed(i))}/mfa`, body: undefined as string | undefined })),
    );
    await fc.assert(
      fc.asyncProperty(call, async (c) => {
        const res = await t.app.request(c.path, {
          method: c.method,
          headers: { 'X-Internal-Token': t.internalToken, ...(c.body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(c.body === undefined ? {} : { body: c.body }),
        });
        const a = await answerOf(res);
        stats.record(a.status);
        const what = `${c.method} ${c.path.slice(0, 200)} ${c.body?.slice(0, 200) ?? ''}`;
        expectRelayAnswer(a, 200, ['VALIDATION_ERROR', 'NOT_FOUND'], what);
        if (a.status === 200 && c.method === 'GET' && !c.path.includes('/users/')) {
          expect((a.body as { users: unknown[] }).users.length, what).toBeLessThanOrEqual(100);
        }
      }),
      fuzzParameters(),
    );
    // Whatever the fuzz left, lifting the ban restores the user's login.
    expect((await t.app.request(`/internal/v1/users/${target.id}/ban`, { method: 'DELETE', headers: { 'X-Internal-Token': t.internalToken } })).status).toBe(200);
  });

  it('GET /profile', async () => {
    await fc.assert(
      fc.asyncProperty(
        requests(anyJson, authorization(() => owner.tokens.token)),
        async (r) => {
          const a = await send('GET', '/api/v1/auth/profile', r);
          expectApiAnswer(a, [0, 1002], describeRequest('GET', '/profile', r));
        },
      ),
      fuzzParameters(),
    );
  });

  it('GET /ice-servers', async () => {
    await fc.assert(
      fc.asyncProperty(requests(anyJson, authorization(() => owner.tokens.token)), async (r) => {
        const a = await send('GET', '/api/v1/auth/ice-servers', r);
        expectApiAnswer(a, [0, 1002], describeRequest('GET', '/ice-servers', r));
        if ((a.body as { code: number }).code === 0) expect((a.body as { data: { ice_servers: { username: string }[] } }).data.ice_servers[0]!.username).toMatch(new RegExp(`^\\d+:${owner.id}$`));
        expect(JSON.stringify(a.body)).not.toContain(TURN_SECRET);
      }),
      fuzzParameters(),
    );
  });

  it('PUT /profile: and only the fields sent change, to exactly what was sent', async () => {
    const valid = () => ({ nickname: 'Nick', avatar: 'https://example.com/a.png', gender: 1, phone: '+1 (555) 010-999' });
    const fields = fc.record(
      {
        nickname,
        avatar: fc.oneof(fc.webUrl(), corrupted(fc.webUrl()), anyString, fc.constantFrom('', 'http://', 'javascript:alert(1)', 'https://x', `https://e.com/${'a'.repeat(520)}`)),
        gender: fc.oneof(fc.constantFrom(0, 1, 2, 3, -1, '1', 1.5, null), anyJson),
        phone: fc.oneof(fc.stringMatching(/^[0-9 +()-]{0,24}$/), corrupted(fc.stringMatching(/^[0-9 +()-]{5,19}$/)), anyString),
        username: anyString,
        roles: fc.constantFrom(['admin'], 'admin'),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        requests(fc.oneof(anyJson, mutated(valid), fields), fc.oneof({ arbitrary: fc.constant(`Bearer ${owner.tokens.token}`), weight: 4 }, authorization(() => owner.tokens.token))),
        async (r) => {
          const a = await send('PUT', '/api/v1/auth/profile', r);
          const what = describeRequest('PUT', '/profile', r);
          expectApiAnswer(a, [0, 1001, 1002], what);
          const body = a.body as { code: number; data: Record<string, unknown> };
          if (body.code !== 0) return;
          expect({ id: body.data.id, username: body.data.username, email: body.data.email, roles: body.data.roles }, what).toEqual({
            id: owner.id,
            username: owner.username,
            email: owner.email,
            roles: ['user'],
          });
          const sent = JSON.parse(r.body.text as string) as Record<string, unknown>;
          for (const field of ['nickname', 'avatar', 'gender', 'phone']) if (field in sent) expect(body.data[field], what).toEqual(sent[field]);
        },
      ),
      fuzzParameters(),
    );
  });

  it('PUT /password', async () => {
    const valid = () => ({ old_password: owner.password, new_password: 'fresh-secret' });
    const fields = fc.record(
      { old_password: fc.oneof(fc.constant(null).map(() => owner.password), anyString, anyJson), new_password: fc.oneof(anyString, anyJson) },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        requests(fc.oneof(anyJson, mutated(valid), fields), fc.oneof({ arbitrary: fc.constant(`Bearer ${owner.tokens.token}`), weight: 4 }, authorization(() => owner.tokens.token))),
        async (r) => {
          const a = await send('PUT', '/api/v1/auth/password', r);
          expectApiAnswer(a, [0, 1001, 1002, 2003], describeRequest('PUT', '/password', r));
          if ((a.body as { code: number }).code === 0) owner.password = (JSON.parse(r.body.text as string) as { new_password: string }).new_password;
        },
      ),
      fuzzParameters(),
    );
    // The password the fuzz ended with is the one that logs in.
    const login = await t.app.request('/api/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: owner.username, password: owner.password }),
    });
    expect(((await login.json()) as { code: number }).code).toBe(0);
  });

  it('unknown routes, wrong methods and odd paths under /api', async () => {
    const path = fc.oneof(
      fc.constantFrom('/api', '/api/', '/api/v1', '/api/v1/auth', '/api/v1/auth/', '/api/v2/auth/login', '/api/v1/auth/LOGIN', '/api/v1/auth/login/', '/api/v1/auth/%2e%2e/login', '/api/v1/auth/profile/..', '/api/v1/./auth/profile'),
      notAnId.map((id) => `/api/v1/auth/${id}`),
      fc.tuple(fc.constantFrom('login', 'register', 'profile', 'password', 'logout', 'refresh-token', 'sessions', 'account', 'password/reset', 'mfa/totp', 'login/mfa', 'passkeys', 'passkeys/login'), notAnId).map(([route, id]) => `/api/v1/auth/${route}/${id}`),
      fc.array(notAnId, { maxLength: 4 }).map((segments) => `/api/${segments.join('/')}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), path, requests(anyJson, authorization(() => owner.tokens.token)), async (method, p, r) => {
        const a = await send(method, p, r);
        // A client's URL parser resolves dot segments first: '/api/..' is '/', outside the area.
        const resolved = new URL(p, 'http://localhost').pathname;
        if (resolved === '/api' || resolved.startsWith('/api/')) expectApiAnswer(a, [0, 1001, 1002, 1004, 2001, 2002, 2003, 2004], describeRequest(method, p, r));
        else expect(a.status, describeRequest(method, p, r)).toBe(404);
      }),
      fuzzParameters(),
    );
    expect(stats.serverErrors).toBe(0);
  });
});

// ------------------------------------------------------------------ passkeys (issue 31)
describe('fuzz /api/v1/auth/passkeys', () => {
  const ORIGIN = 'http://localhost:3000';
  const authenticator = new SoftAuthenticator();
  let keyOwner: Registered;
  let registration: unknown;
  let assertion: unknown;
  let passkeyIds: string[] = [];

  beforeAll(async () => {
    keyOwner = await registerVerified(t);
    const auth = { authorization: `Bearer ${keyOwner.tokens.token}` };
    const options = async (path: string, headers: Record<string, string> = {}) => ((await (await t.app.request(`/api/v1/auth/passkeys/${path}`, { method: 'POST', headers })).json()) as { data: any }).data;
    const added = await t.app.request('/api/v1/auth/passkeys/register/verify', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ response: authenticator.create(await options('register/options', auth), { origin: ORIGIN }) }),
    });
    passkeyIds = [((await added.json()) as { data: { id: string } }).data.id];
    // Valid bodies to break (their challenges still outstanding: a run that keeps them whole succeeds once).
    registration = authenticator.create(await options('register/options', auth), { origin: ORIGIN });
    authenticator.credentials.pop();
    assertion = authenticator.get(await options('login/options'), { origin: ORIGIN });
  }, APP_TIMEOUT);

  const bearer = () => fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${keyOwner.tokens.token}`), weight: 4 }, authorization(() => keyOwner.tokens.token));
  const name = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 70 }), anyString, anyJson);

  it('POST /passkeys/register/options and /login/options', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('register', 'login'), requests(anyJson, bearer()), async (ceremony, r) => {
        const a = await send('POST', `/api/v1/auth/passkeys/${ceremony}/options`, r);
        expectApiAnswer(a, ceremony === 'register' ? [0, 1002, 2015, 2017] : [0], describeRequest('POST', `/passkeys/${ceremony}/options`, r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /passkeys/register/verify', async () => {
    const fields = fc.record({ response: fc.oneof(anyJson, mutated(() => registration, { oversized: true })), name }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(() => ({ response: registration, name: 'key' }), { oversized: true }), fields), bearer()), async (r) => {
        const a = await send('POST', '/api/v1/auth/passkeys/register/verify', r);
        expectApiAnswer(a, [0, 1001, 1002, 2014, 2015, 2016, 2017], describeRequest('POST', '/passkeys/register/verify', r));
        if ((a.body as { code: number }).code === 0) passkeyIds.push((a.body as { data: { id: string } }).data.id);
      }),
      fuzzParameters(),
    );
  });

  it('POST /passkeys/login/verify', async () => {
    const fields = fc.record({ response: fc.oneof(anyJson, mutated(() => assertion, { oversized: true })) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutated(() => ({ response: assertion }), { oversized: true }), fields)), async (r) => {
        const a = await send('POST', '/api/v1/auth/passkeys/login/verify', r);
        expectApiAnswer(a, [0, 1001, 2014], describeRequest('POST', '/passkeys/login/verify', r));
      }),
      fuzzParameters(),
    );
  });

  it("GET /passkeys and DELETE /passkeys/:id: only the caller's own go", async () => {
    const id = fc.oneof(notAnId, fc.uuid(), fc.constant(null).map(() => passkeyIds[0] ?? 'gone'), fc.constant(null).map(() => deviceIds[0] ?? 'none'));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'DELETE'), id, requests(anyJson, bearer()), async (method, passkeyId, r) => {
        const path = method === 'GET' ? '/api/v1/auth/passkeys' : `/api/v1/auth/passkeys/${passkeyId}`;
        const a = await send(method, path, r);
        const what = describeRequest(method, path.slice(0, 120), r);
        expectApiAnswer(a, [0, 1002, 1004], what);
        if (method === 'DELETE' && (a.body as { code: number }).code === 0) {
          expect(passkeyIds, what).toContain(passkeyId);
          passkeyIds = passkeyIds.filter((p) => p !== passkeyId);
        }
        if (method === 'GET' && (a.body as { code: number }).code === 0) expect((a.body as { data: unknown[] }).data.length, what).toBeLessThanOrEqual(20);
      }),
      fuzzParameters(),
    );
    expect(stats.serverErrors).toBe(0);
  });
});

describe('fuzz /api/v1/auth/oidc and /identities', () => {
  let oidcOwner: Registered;
  let nonce = 'fuzz-nonce';
  const idToken = (claims: Record<string, unknown> = {}) =>
    issuer.sign({ aud: OIDC_CLIENT_ID, sub: `fz-${uniqueName()}`, nonce, email: `${uniqueName('oi')}@example.com`, email_verified: true, ...claims });
  let valid = '';
  beforeAll(async () => {
    oidcOwner = await register(t.app);
    valid = await idToken();
    nonce = 'fuzz-nonce';
  }, APP_TIMEOUT);
  const bearer = () => fc.oneof({ arbitrary: fc.constant(null).map(() => `Bearer ${oidcOwner.tokens.token}`), weight: 4 }, authorization(() => oidcOwner.tokens.token));
  const provider = fc.oneof({ arbitrary: fc.constant('acme'), weight: 6 }, fc.constantFrom('google', 'ACME', 'a'.repeat(40), '%2e%2e', 'acme%00'));
  const tokenFields = () =>
    fc.record(
      { id_token: fc.oneof(fc.constant(null).map(() => valid), corrupted(fc.constant(null).map(() => valid)), anyString, anyJson), nonce: fc.oneof(fc.constant('fuzz-nonce'), anyString, anyJson) },
      { requiredKeys: [] },
    );

  it('POST /oidc/{provider}/id-token and /link/id-token', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('id-token', 'link/id-token'), provider, requests(fc.oneof(anyJson, mutated(() => ({ id_token: valid, nonce: 'fuzz-nonce' })), tokenFields()), bearer()), async (kind, name, r) => {
        const path = `/api/v1/auth/oidc/${name}/${kind}`;
        const a = await send('POST', path, r);
        expectApiAnswer(a, kind === 'id-token' ? [0, 1001, 2019, 2020, 2021] : [0, 1001, 1002, 2017, 2019, 2022], describeRequest('POST', path, r));
      }),
      fuzzParameters(),
    );
  });

  it('GET /oidc/{provider}/start and /callback, POST /oidc/{provider}/callback (a form) and /link/start: a redirect or the envelope, never a 5xx', async () => {
    const redirect = fc.oneof(fc.constant(OIDC_RETURN), fc.constant(`${OIDC_RETURN}/x`), anyString.map((v) => (typeof v === 'string' ? v : '')));
    const callbackQuery = fc.record({ state: fc.option(anyString.map(String), { nil: undefined }), code: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }), iss: fc.option(fc.constant(issuer.issuer), { nil: undefined }) });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('start', 'callback', 'callback-form', 'link/start'), provider, redirect, callbackQuery, requests(anyJson, bearer()), fc.boolean(), async (kind, name, to, cb, r, asForm) => {
        const answer = Object.entries(cb).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(wellFormed(String(v)))}`).join('&');
        const params = kind === 'callback' ? answer : kind === 'callback-form' ? '' : `redirect_uri=${encodeURIComponent(wellFormed(to))}`;
        const path = `/api/v1/auth/oidc/${name}/${kind === 'callback-form' ? 'callback' : kind}`;
        const method = kind === 'link/start' || kind === 'callback-form' ? 'POST' : 'GET';
        // The form the provider would post, or the fuzzed body and content type.
        const form = kind === 'callback-form' && asForm ? { contentType: 'application/x-www-form-urlencoded', body: { text: answer, note: 'form' } } : {};
        const a = await send(method, path, { ...r, ...form, query: `?${params}` });
        const what = describeRequest(method, path, r);
        if (a.status === 302) {
          expect(kind, what).not.toMatch(/^callback/);
          return;
        }
        expectApiAnswer(a, kind.startsWith('callback') ? [1001, 2019] : kind === 'start' ? [1001] : [0, 1001, 1002, 2017], what);
      }),
      fuzzParameters(),
    );
  });

  it('GET /oidc/providers, POST /oidc/exchange, GET /identities, DELETE /identities/:id, POST /password/set', async () => {
    const id = fc.oneof(notAnId, fc.uuid());
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('providers', 'exchange', 'list', 'unlink', 'password'),
        id,
        requests(fc.oneof(anyJson, fc.record({ code: fc.oneof(anyString, anyJson) }, { requiredKeys: [] }), fc.record({ password: fc.oneof(anyString, anyJson, fc.constant('a-long-password-1')) }, { requiredKeys: [] })), bearer()),
        async (kind, identityId, r) => {
          const [method, path, codes] = {
            providers: ['GET', '/api/v1/auth/oidc/providers', [0]],
            exchange: ['POST', '/api/v1/auth/oidc/exchange', [1001, 2019]],
            list: ['GET', '/api/v1/auth/identities', [0, 1002]],
            unlink: ['DELETE', `/api/v1/auth/identities/${identityId}`, [1002]],
            password: ['POST', '/api/v1/auth/password/set', [1001, 1002]],
          }[kind] as [string, string, number[]];
          const a = await send(method, path, r);
          expectApiAnswer(a, codes, describeRequest(method, path.slice(0, 120), r));
        },
      ),
      fuzzParameters(),
    );
    expect(stats.serverErrors).toBe(0);
  });
});
