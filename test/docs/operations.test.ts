// The operations of the OpenAPI documents, as they were when the documents were still kept by hand
// (src/docs/openapi.ts, dumped before the routes were declared with createRoute): each operation with
// the status codes of its responses. The generated documents must keep every one of them.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

/** `METHOD path statuses` of the public document (the account API, health and docs). */
const PUBLIC_OPERATIONS = [
  'POST /api/v1/auth/register 200,400,409,429,500,503',
  'POST /api/v1/auth/login 200,400,401,403,429,500,503',
  'POST /api/v1/auth/logout 200,400,401,429,500',
  'POST /api/v1/auth/refresh-token 200,400,401,429,500',
  'GET /api/v1/auth/profile 200,401,429,500',
  'PUT /api/v1/auth/profile 200,400,401,429,500',
  'PUT /api/v1/auth/password 200,400,401,403,429,500,503',
  'GET /api/v1/auth/sessions 200,401,429,500',
  'DELETE /api/v1/auth/sessions/{id} 200,401,404,429,500',
  'DELETE /api/v1/auth/account 200,400,401,403,429,500,503',
  'POST /api/v1/auth/password/forgot 200,400,404,429,500,503',
  'POST /api/v1/auth/password/reset 200,400,403,404,429,500',
  // Issue 28, added after the documents were generated: TURN credentials.
  'GET /api/v1/auth/ice-servers 200,401,429,500',
  // Issue 31: verified e-mail and changing the address.
  'POST /api/v1/auth/email/verify 200,400,401,404,409,429,500',
  'POST /api/v1/auth/email/verify/resend 200,401,404,409,429,500,503',
  'PUT /api/v1/auth/email 200,400,401,403,404,409,429,500,503',
  'POST /api/v1/auth/email/confirm 200,400,401,404,409,429,500',
  // Issue 31: TOTP and the login's second step.
  'POST /api/v1/auth/mfa/totp/setup 200,401,403,409,429,500',
  'POST /api/v1/auth/mfa/totp/enable 200,400,401,403,409,429,500',
  'DELETE /api/v1/auth/mfa/totp 200,400,401,403,409,429,500,503',
  'POST /api/v1/auth/login/mfa 200,400,401,403,429,500',
  // Issue 31: passkeys (404: not configured, production without WEBAUTHN_RP_ID).
  'POST /api/v1/auth/passkeys/register/options 200,401,403,404,409,429,500',
  'POST /api/v1/auth/passkeys/register/verify 200,400,401,403,404,409,429,500',
  'POST /api/v1/auth/passkeys/login/options 200,404,429,500',
  'POST /api/v1/auth/passkeys/login/verify 200,400,401,403,404,429,500',
  'GET /api/v1/auth/passkeys 200,401,404,429,500',
  'DELETE /api/v1/auth/passkeys/{id} 200,401,404,429,500',
  'POST /api/v1/auth/reauth 200,400,401,403,404,409,429,500,503',
  'POST /api/v1/auth/reauth/passkey/options 200,401,404,429,500',
  'GET /healthz 200,429,500',
  'GET /readyz 200,429,500',
  'GET /api/v1/openapi.json 200,429,500',
  'GET /docs 200,429,500',
  'GET /.well-known/jwks.json 200,429,500',
];

/**
 * The internal document's operations outside the relay: the audit trail, the metrics, the document
 * itself and its page (which needs no token: no 401).
 */
const INTERNAL_OPERATIONS = [
  'GET /internal/docs 200,500',
  'GET /internal/metrics 200,401,500',
  'GET /internal/v1/openapi.json 200,401,500',
  'GET /internal/v1/auth-events 200,400,401,500',
  'POST /internal/v1/auth/introspect 200,400,401,500',
  'GET /internal/v1/users 200,400,401,500',
  'GET /internal/v1/users/{id} 200,400,401,404,500',
  'POST /internal/v1/users/{id}/ban 200,400,401,404,500',
  'DELETE /internal/v1/users/{id}/ban 200,400,401,404,500',
  'DELETE /internal/v1/users/{id}/mfa 200,400,401,404,500',
];

/**
 * Responses the generated documents add, each a status the endpoint really answers with and the
 * hand-kept document left out.
 */
const ADDED = { 'GET /readyz': ['503'] } as Record<string, string[]>;

/** The expected operations: the hand-kept ones, with the added statuses. */
function expected(list: readonly string[]): string[] {
  return list
    .map((line) => {
      const [method, path, statuses] = line.split(' ') as [string, string, string];
      // The 64 KiB body limit answers 413 before any account route (found by the answers check).
      const bodyLimit = path.startsWith('/api/v1/auth/') ? ['413'] : [];
      const all = [...new Set([...statuses.split(','), ...(ADDED[`${method} ${path}`] ?? []), ...bodyLimit])].sort();
      return `${method} ${path} ${all.join(',')}`;
    })
    .sort();
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

function operations(doc: Doc, only?: RegExp): string[] {
  const list: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (only && !only.test(path)) continue;
    for (const [method, op] of Object.entries(ops)) list.push(`${method.toUpperCase()} ${path} ${Object.keys(op.responses).sort().join(',')}`);
  }
  return list.sort();
}

async function documents(t: TestApp): Promise<{ publicDoc: Doc; internalDoc: Doc }> {
  const pub = await t.app.request('/api/v1/openapi.json');
  const internal = await t.app.request('/internal/v1/openapi.json', { headers: { 'X-Internal-Token': t.internalToken } });
  expect([pub.status, internal.status]).toEqual([200, 200]);
  return { publicDoc: (await pub.json()) as Doc, internalDoc: (await internal.json()) as Doc };
}

const NOT_RELAY = /^\/internal\/(metrics|docs|v1\/openapi\.json|v1\/auth-events|v1\/auth\/introspect|v1\/users(\/\{id\}(\/ban|\/mfa)?)?)$/;

describe('the documents of every area composed', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('list the same public operations, with the same response statuses', async () => {
    const { publicDoc } = await documents(t);
    expect(operations(publicDoc)).toEqual(expected(PUBLIC_OPERATIONS));
  });

  it('list the same internal operations outside the relay, with the same response statuses', async () => {
    const { internalDoc } = await documents(t);
    expect(operations(internalDoc, NOT_RELAY)).toEqual(expected(INTERNAL_OPERATIONS));
  });

  // Issue 27 #7: Swagger UI groups operations by tag; an untagged one lands under "default".
  it('group every operation under the tag of its resource', async () => {
    const { publicDoc, internalDoc } = await documents(t);
    const tagsOf = (doc: Doc) => {
      const byTag: Record<string, number> = {};
      for (const ops of Object.values(doc.paths)) {
        for (const op of Object.values(ops) as Array<{ tags?: string[] }>) {
          expect(op.tags?.length).toBe(1);
          byTag[op.tags![0]!] = (byTag[op.tags![0]!] ?? 0) + 1;
        }
      }
      return Object.keys(byTag).sort();
    };
    expect(tagsOf(publicDoc)).toEqual(['account', 'docs', 'e-mail', 'ice-servers', 'keys', 'observability', 'passkeys', 'password', 'profile', 'session', 'sessions', 'two-factor']);
    expect(tagsOf(internalDoc)).toEqual(
      ['audit', 'tokens', 'users', 'consumers', 'data-consumers', 'data-producers', 'docs', 'events', 'ice-servers', 'observability', 'pipe-transports', 'plain-transports', 'producers', 'recordings', 'routers', 'service', 'transports'].sort(),
    );
    const tagOf = (doc: Doc, method: string, path: string) => (doc.paths[path]![method] as { tags?: string[] }).tags;
    expect(tagOf(internalDoc, 'post', '/internal/v1/consumers/{id}/pause')).toEqual(['consumers']);
    expect(tagOf(internalDoc, 'post', '/internal/v1/drain')).toEqual(['service']);
    expect(tagOf(publicDoc, 'post', '/api/v1/auth/login')).toEqual(['session']);
  });
});

describe('the documents without the relay (generated from the routes alone)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({}, { areas: { relay: false } });
  });
  afterAll(() => t.close());

  it('list the same public operations, with the same response statuses', async () => {
    const { publicDoc } = await documents(t);
    expect(operations(publicDoc)).toEqual(expected(PUBLIC_OPERATIONS));
  });

  it('list the same internal operations outside the relay, with the same response statuses', async () => {
    const { internalDoc } = await documents(t);
    expect(operations(internalDoc)).toEqual(expected(INTERNAL_OPERATIONS));
  });

  it('are valid OpenAPI 3.1', async () => {
    const { publicDoc, internalDoc } = await documents(t);
    for (const doc of [publicDoc, internalDoc]) {
      const result = await new Validator().validate(doc);
      expect(result.errors ?? []).toEqual([]);
    }
  });

  it('name every operation as the hand-kept documents did', async () => {
    const { publicDoc, internalDoc } = await documents(t);
    const ids = [publicDoc, internalDoc].flatMap((doc) => Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => (op as { operationId?: string }).operationId)));
    expect(ids).toEqual(expect.arrayContaining(['postApiV1AuthLogin', 'deleteApiV1AuthSessionsId', 'getHealthz', 'getInternalV1AuthEvents', 'getInternalMetrics']));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
