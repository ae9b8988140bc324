// Serves the OpenAPI documents and the interactive docs pages (Swagger UI, its assets served from
// the swagger-ui-dist package so the pages work without any CDN): /docs for the account API, and
// /internal/docs for the relay, whose shell holds no data and asks for the internal token to load the
// document. The endpoints are declared with createRoute, so the documents list them too.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { swaggerUI } from '@hono/swagger-ui';
import type { Context } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { z } from 'zod';
import type { AppEnv } from '../http/env.js';
import type { Module } from '../http/module.js';
import { buildDocument } from './document.js';

const ASSET_BASE = '/docs/assets';
/** The internal page's assets, on the listener that serves /internal (INTERNAL_PORT's when set). */
const INTERNAL_ASSET_BASE = '/internal/docs/assets';
const INTERNAL_DOCUMENT = '/internal/v1/openapi.json';
const assetTypes: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};
const swaggerDist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const openApiDocument = z.record(z.string(), z.unknown());

const publicDocument = createRoute({
  tags: ['docs'],
  method: 'get',
  path: '/api/v1/openapi.json',
  summary: 'This document',
  responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: openApiDocument } } } },
});

const docsPage = createRoute({
  tags: ['docs'],
  method: 'get',
  path: '/docs',
  summary: 'Interactive documentation of the account API (HTML)',
  responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } } },
});

const internalDocument = createRoute({
  tags: ['docs'],
  method: 'get',
  path: '/v1/openapi.json',
  summary: 'This document',
  responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: openApiDocument } } } },
});

/** GET /api/v1/openapi.json, GET /docs and the two assets the page loads (not documented). */
function createDocsApp(documented: () => readonly Module[]) {
  let document: ReturnType<typeof buildDocument> | undefined;
  const page = swaggerUI({ url: '/api/v1/openapi.json', baseUrl: ASSET_BASE, title: 'Chat backend: account API' });
  return new OpenAPIHono<AppEnv>()
    .openapi(publicDocument, (c) => c.json((document ??= buildDocument('public', documented())) as unknown as Record<string, unknown>, 200))
    // swaggerUI is a middleware of the plain Env; it answers the page itself.
    .openapi(docsPage, (c, next) => page(c as never, next) as Promise<Response>)
    .get(`${ASSET_BASE}/swagger-ui-dist/:file`, serveAsset);
}

const assets = new Map<string, Promise<Buffer>>();

/** One of the two Swagger UI files, from the installed swagger-ui-dist (read once). */
async function serveAsset(c: Context<AppEnv>) {
  const file = c.req.param('file') ?? c.req.path.slice(c.req.path.lastIndexOf('/') + 1);
  const type = assetTypes[file];
  if (!type) return c.notFound();
  let content = assets.get(file);
  if (!content) {
    content = readFile(join(swaggerDist, file));
    assets.set(file, content);
  }
  return c.body(new Uint8Array(await content), 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
}

const internalDocsPage = createRoute({
  tags: ['docs'],
  method: 'get',
  path: '/docs',
  summary: 'Interactive documentation of the relay (HTML). The page holds no data and needs no token: it asks for the internal token, keeps it in the tab (sessionStorage) and sends it as X-Internal-Token to load this document and with every "Try it out"',
  security: [],
  responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } } },
});

/**
 * The shell of the relay's docs page: a token form, Swagger UI, and the script joining them. The
 * token lives in this tab's sessionStorage only; Swagger UI's requestInterceptor puts it on every
 * request it makes (the document's own, and "Try it out"), and it is also given to the document's
 * apiKey scheme so the Authorize dialog and the curl lines show it. A 401 on the document shows the
 * relay's message and forgets the token.
 */
function internalShell(asset: { css: string[]; js: string[] }): string {
  const settings = JSON.stringify({ document: INTERNAL_DOCUMENT, key: 'chat-backend.internal-token', scheme: 'internalToken' });
  return `
    <style>
      #token-form { font-family: sans-serif; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 12px 20px; border-bottom: 1px solid #ddd; }
      #token-form input { width: 28em; max-width: 100%; padding: 4px 6px; }
      #token-status { color: #555; }
      #token-status.error { color: #b00020; font-weight: bold; }
    </style>
    ${asset.css.map((url) => `<link rel="stylesheet" href="${url}" />`).join('')}
    <form id="token-form" autocomplete="off">
      <label for="token-input">X-Internal-Token</label>
      <input id="token-input" name="token" type="password" required placeholder="the relay's INTERNAL_TOKEN" />
      <button type="submit">Load the relay API</button>
      <button type="button" id="token-forget">Forget</button>
      <span id="token-status" role="status">The token stays in this tab (sessionStorage) and is sent only to this service.</span>
    </form>
    <div id="swagger-ui"></div>
    ${asset.js.map((url) => `<script src="${url}"></script>`).join('')}
    <script>
      (() => {
        const settings = ${settings};
        const form = document.getElementById('token-form');
        const input = document.getElementById('token-input');
        const status = document.getElementById('token-status');
        const say = (text, error) => { status.textContent = text; status.className = error ? 'error' : ''; };
        const isDocument = (url) => new URL(url, location.href).pathname === settings.document;
        function load(token) {
          say('Loading the relay API...', false);
          window.ui = SwaggerUIBundle({
            dom_id: '#swagger-ui',
            url: settings.document,
            requestInterceptor: (request) => { request.headers['X-Internal-Token'] = token; return request; },
            responseInterceptor: (response) => {
              if (isDocument(response.url)) {
                if (response.ok) say('Token accepted: the document and "Try it out" send it as X-Internal-Token.', false);
                else {
                  const body = response.body && typeof response.body === 'object' ? response.body : {};
                  say(response.status + ' ' + (body.code || response.statusText || 'error') + ': ' + (body.message || 'the document could not be loaded'), true);
                  if (response.status === 401) sessionStorage.removeItem(settings.key);
                }
              }
              return response;
            },
            onComplete: () => window.ui.preauthorizeApiKey(settings.scheme, token),
          });
        }
        form.addEventListener('submit', (event) => {
          event.preventDefault();
          const token = input.value.trim();
          if (!token) return;
          sessionStorage.setItem(settings.key, token);
          input.value = '';
          load(token);
        });
        document.getElementById('token-forget').addEventListener('click', () => {
          sessionStorage.removeItem(settings.key);
          location.reload();
        });
        const kept = sessionStorage.getItem(settings.key);
        if (kept) load(kept);
      })();
    </script>`;
}

/**
 * GET /internal/docs and its two assets under /internal/docs/assets: answered without the token
 * (Module mount `withoutToken`), on the listener that serves /internal only.
 */
function createInternalDocsPage() {
  const page = swaggerUI({ title: 'Chat backend: internal media relay API', baseUrl: INTERNAL_ASSET_BASE, url: INTERNAL_DOCUMENT, manuallySwaggerUIHtml: internalShell });
  const app = new OpenAPIHono<AppEnv>();
  // The headers of /docs, and no referrer leaving the page.
  app.use('/docs', secureHeaders({ referrerPolicy: 'no-referrer' }));
  return (
    app
      // swaggerUI is a middleware of the plain Env; it answers the page itself.
      .openapi(internalDocsPage, (c, next) => page(c as never, next) as Promise<Response>)
      // Only these two names, each its own route (a regex alternation would anchor only its last
      // branch: swagger-ui.css.map matched); any other path under /internal meets the token guard.
      .get('/docs/assets/swagger-ui-dist/swagger-ui.css', serveAsset)
      .get('/docs/assets/swagger-ui-dist/swagger-ui-bundle.js', serveAsset)
  );
}

/** GET /internal/v1/openapi.json (mounted under /internal, behind the app's token guard). */
function createInternalDocsApp(documented: () => readonly Module[]) {
  let document: ReturnType<typeof buildDocument> | undefined;
  return new OpenAPIHono<AppEnv>().openapi(internalDocument, (c) =>
    c.json((document ??= buildDocument('internal', documented())) as unknown as Record<string, unknown>, 200),
  );
}

/**
 * The docs of the composed modules: each surface's document built once, on first request, from the
 * modules `documented` returns then (the composition's whole list, this module included).
 * @example const docs = createDocs(() => modules)
 */
export function createDocs(documented: () => readonly Module[]): Module {
  return {
    name: 'docs',
    mounts: [
      { prefix: '/', surface: 'public', routes: createDocsApp(documented) },
      { prefix: '/internal', surface: 'internal', routes: createInternalDocsApp(documented) },
      { prefix: '/internal', surface: 'internal', withoutToken: true, routes: createInternalDocsPage() },
    ],
  };
}
