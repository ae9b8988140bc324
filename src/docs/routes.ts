// Serves the OpenAPI documents and the interactive docs page (Swagger UI, its assets served from
// the swagger-ui-dist package so the page works without any CDN); the endpoints are declared with
// createRoute, so the documents list them too.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { swaggerUI } from '@hono/swagger-ui';
import { z } from 'zod';
import type { AppEnv } from '../http/env.js';
import type { Module } from '../http/module.js';
import { buildDocument } from './document.js';

const ASSET_BASE = '/docs/assets';
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
  const assets = new Map<string, Promise<Buffer>>();
  const page = swaggerUI({ url: '/api/v1/openapi.json', baseUrl: ASSET_BASE, title: 'Chat backend: account API' });
  return new OpenAPIHono<AppEnv>()
    .openapi(publicDocument, (c) => c.json((document ??= buildDocument('public', documented())) as unknown as Record<string, unknown>, 200))
    // swaggerUI is a middleware of the plain Env; it answers the page itself.
    .openapi(docsPage, (c, next) => page(c as never, next) as Promise<Response>)
    .get(`${ASSET_BASE}/swagger-ui-dist/:file`, async (c) => {
      const file = c.req.param('file');
      const type = assetTypes[file];
      if (!type) return c.notFound();
      let content = assets.get(file);
      if (!content) {
        content = readFile(join(swaggerDist, file));
        assets.set(file, content);
      }
      return c.body(new Uint8Array(await content), 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
    });
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
    ],
  };
}
