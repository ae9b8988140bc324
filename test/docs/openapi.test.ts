import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_EVENT_TYPES } from '../../src/accounts/events.js';
import { appWith, buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>> };

async function documents(): Promise<{ publicDoc: Doc; internalDoc: Doc }> {
  const pub = await t.app.request('/api/v1/openapi.json');
  expect(pub.status).toBe(200);
  const internal = await t.app.request('/internal/v1/openapi.json', { headers: { 'X-Internal-Token': t.internalToken } });
  expect(internal.status).toBe(200);
  return { publicDoc: (await pub.json()) as Doc, internalDoc: (await internal.json()) as Doc };
}

describe('OpenAPI documents', () => {
  it('are valid OpenAPI 3.1', async () => {
    const { publicDoc, internalDoc } = await documents();
    for (const doc of [publicDoc, internalDoc]) {
      expect(doc.openapi).toBe('3.1.0');
      const result = await new Validator().validate(doc);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
    }
  });

  it('keep the internal document behind the token', async () => {
    expect((await t.app.request('/internal/v1/openapi.json')).status).toBe(401);
  });

  it('list every route the app serves, with its method', async () => {
    const { publicDoc, internalDoc } = await documents();
    const documented = new Set<string>();
    for (const doc of [publicDoc, internalDoc]) {
      for (const [path, ops] of Object.entries(doc.paths)) for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const served = t.app.routes
      .filter((r) => r.method !== 'ALL' && !r.path.includes('/docs/assets/'))
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(served.length).toBeGreaterThan(15);
    for (const route of served) expect(documented, route).toContain(route);
  });

  it('describe bodies from the validating schemas and every error code', async () => {
    const { publicDoc, internalDoc } = await documents();
    const register = publicDoc.paths['/api/v1/auth/register']!.post!;
    expect(JSON.stringify(register.requestBody)).toContain('^[A-Za-z0-9_]{3,50}$');
    const codes = JSON.stringify(publicDoc);
    for (const code of [1000, 1001, 1002, 1003, 1004, 2001, 2002, 2003, 2004, 2005]) expect(codes).toContain(`"code":${code}`);
    const relay = JSON.stringify(internalDoc);
    for (const code of ['VALIDATION_ERROR', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT', 'ROUTER_LIMIT_EXCEEDED', 'ROUTER_CAPACITY_EXCEEDED', 'STREAM_LIMIT_EXCEEDED', 'CAN_NOT_CONSUME', 'MEDIASOUP_ERROR', 'INTERNAL_ERROR']) {
      expect(relay).toContain(`"code":"${code}"`);
    }
    // The relay's input bounds are in its document (they come from the same schemas).
    const produce = JSON.stringify(internalDoc.paths['/internal/v1/producers']!.post!.requestBody);
    expect(produce).toContain('"scalabilityMode":{"type":"string","maxLength":14,"pattern":"^[LS][1-5]T[1-4](h|_KEY|_KEY_SHIFT)?$"}');
    expect(produce).toMatch(/"encodings":\{"maxItems":16/);
    expect(produce).toContain('at most 4096 bytes as JSON');
    const events = internalDoc.paths['/internal/v1/auth-events']!.get! as unknown as { parameters: Array<{ name: string; in: string }> };
    expect(events.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['query:cursor', 'query:limit', 'query:since', 'query:type', 'query:userId']);
    const logout = publicDoc.paths['/api/v1/auth/logout']!.post! as unknown as { requestBody: { required: boolean } };
    expect(logout.requestBody.required).toBe(false);
    // The event stream (with its own 503) and the webhook the relay POSTs.
    expect(Object.keys(internalDoc.paths['/internal/v1/events']!.get!.responses)).toEqual(expect.arrayContaining(['200', '400', '503']));
    expect(Object.keys((internalDoc as unknown as { webhooks: Record<string, unknown> }).webhooks ?? {}).length).toBeGreaterThan(0);
    // With both areas composed, the stream and the webhook document the account events the bus carries,
    // and the stream its types filter.
    const stream = internalDoc.paths['/internal/v1/events']!.get! as unknown as { description: string; parameters: Array<{ name: string }>; responses: Record<string, unknown> };
    const webhook = (internalDoc as unknown as { webhooks: Record<string, { post: { requestBody: unknown } }> }).webhooks.relayEvents!.post.requestBody;
    for (const type of ACCOUNT_EVENT_TYPES) {
      expect(stream.description).toContain(type);
      expect(JSON.stringify(stream.responses['200'])).toContain(`"const":"${type}"`);
      expect(JSON.stringify(webhook)).toContain(`"const":"${type}"`);
    }
    expect(JSON.stringify(webhook)).toContain('"const":"router.closed"');
    expect(stream.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(['routerId', 'types', 'Last-Event-ID']));
    const consume = internalDoc.paths['/internal/v1/consumers']!.post!;
    expect(Object.keys(consume.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '404', '409', '500']));
  });

  it('serve the interactive docs page with its assets locally', async () => {
    const page = await t.app.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/api/v1/openapi.json');
    const scripts = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      expect(src.startsWith('/')).toBe(true); // no CDN
      const asset = await t.app.request(src);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
    }
  });

  // Issue 27 #7: the relay's page. Its shell answers without the token and holds no data; the
  // document it loads stays behind the token (test/e2e/internal-docs-page.test.ts drives it in Chromium).
  it('serve the relay docs page without the token, holding no data, its assets locally', async () => {
    const page = await t.app.request('/internal/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('/internal/v1/openapi.json');
    expect(html).toContain('X-Internal-Token');
    expect(html).toContain('sessionStorage');
    expect(html).not.toContain(t.internalToken);
    // No operation of the document is in the shell.
    expect(html).not.toMatch(/\/internal\/v1\/(routers|transports|producers|consumers)/);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.sort()).toEqual(['/internal/docs/assets/swagger-ui-dist/swagger-ui-bundle.js', '/internal/docs/assets/swagger-ui-dist/swagger-ui.css']);
    for (const src of assets) {
      const asset = await t.app.request(src);
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript|css/);
    }
    // Nothing else under it is open: other paths, methods and the document still need the token.
    for (const [method, path] of [
      ['GET', '/internal/docs/assets/swagger-ui-dist/index.html'],
      ['GET', '/internal/docs/other'],
      ['POST', '/internal/docs'],
      ['GET', '/internal/v1/openapi.json'],
      ['GET', '/internal/info'],
    ] as const) {
      const res = await t.app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });
});

describe('surfaces (separate internal listener)', () => {
  it('public: the account API and docs; /internal/* is 404 even with the token', async () => {
    const app = appWith(t, { surface: 'public' });
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(200);
    expect((await app.request('/api/v1/openapi.json')).status).toBe(200);
    for (const path of ['/internal/info', '/internal/metrics', '/internal/v1/openapi.json']) {
      const res = await app.request(path, { headers: { 'X-Internal-Token': t.internalToken } });
      expect(res.status, path).toBe(404);
    }
    const create = await app.request('/internal/v1/routers', { method: 'POST', headers: { 'X-Internal-Token': t.internalToken, 'content-type': 'application/json' }, body: '{}' });
    expect(create.status).toBe(404);
    expect(t.media.info().counts.routers).toBe(0);
    // The relay's docs page is served only where /internal is.
    expect((await app.request('/internal/docs')).status).toBe(404);
    expect((await app.request('/internal/docs/assets/swagger-ui-dist/swagger-ui.css')).status).toBe(404);
  });

  it('internal: the relay with its token; no account API', async () => {
    const app = appWith(t, { surface: 'internal' });
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(200);
    expect((await app.request('/internal/info')).status).toBe(401);
    expect((await app.request('/internal/info', { headers: { 'X-Internal-Token': t.internalToken } })).status).toBe(200);
    expect((await app.request('/api/v1/auth/profile')).status).toBe(404);
    expect((await app.request('/docs')).status).toBe(404);
    expect((await app.request('/internal/docs')).status).toBe(200);
    expect((await app.request('/internal/docs/assets/swagger-ui-dist/swagger-ui-bundle.js')).status).toBe(200);
  });
});
