// Serves the OpenAPI documents and the interactive docs page (Swagger UI, its assets served from
// the swagger-ui-dist package so the page works without any CDN).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { swaggerUI } from '@hono/swagger-ui';
import { Hono, type MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app.js';
import { accountApiDocument, relayApiDocument } from './openapi.js';

const ASSET_BASE = '/docs/assets';
const assetTypes: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};
const swaggerDist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** GET /api/v1/openapi.json, GET /docs and the two assets the page loads. */
export function createDocsApp() {
  const document = accountApiDocument();
  const assets = new Map<string, Promise<Buffer>>();
  return new Hono<AppEnv>()
    .get('/api/v1/openapi.json', (c) => c.json(document))
    .get('/docs', swaggerUI({ url: '/api/v1/openapi.json', baseUrl: ASSET_BASE, title: 'Chat backend: account API' }))
    .get(`${ASSET_BASE}/swagger-ui-dist/:file`, async (c) => {
      const file = c.req.param('file');
      const type = assetTypes[file];
      if (!type) return c.json({ error: 'not found' }, 404);
      let content = assets.get(file);
      if (!content) {
        content = readFile(join(swaggerDist, file));
        assets.set(file, content);
      }
      return c.body(new Uint8Array(await content), 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
    });
}

/** GET /internal/v1/openapi.json behind the internal token guard. */
export function createInternalDocsApp(guard: MiddlewareHandler) {
  const document = relayApiDocument();
  return new Hono<AppEnv>().get('/v1/openapi.json', guard, (c) => c.json(document));
}
