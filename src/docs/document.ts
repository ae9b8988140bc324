// The OpenAPI document of one surface, generated from the composed modules: the operations their
// OpenAPIHono mounts declare with createRoute, plus what each module adds (info, tags, security,
// streams, webhooks). Imports no area: modules are known through src/http/module.ts only.
import { OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../package.json' with { type: 'json' };
import type { Module, Surface } from '../http/module.js';

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
  security?: Array<Record<string, string[]>>;
  tags?: Array<{ name: string; description?: string }>;
  webhooks?: Record<string, unknown>;
}

const DEFAULT_TITLES: Record<Surface, string> = { public: 'Chat backend: account API', internal: 'Chat backend: internal media relay API' };

/**
 * @example buildDocument('internal', [relay, accounts, observability])
 */
export function buildDocument(surface: Surface, modules: readonly Module[]): OpenApiDocument {
  const doc: OpenApiDocument = { openapi: '3.1.0', info: { title: DEFAULT_TITLES[surface], version: packageJson.version }, paths: {}, components: {} };
  for (const module of modules) {
    for (const mount of module.mounts) {
      if (mount.surface !== surface || !(mount.routes instanceof OpenAPIHono)) continue;
      const generated = mount.routes.getOpenAPI31Document({ openapi: '3.1.0', info: doc.info });
      for (const [path, item] of Object.entries(generated.paths ?? {})) addPath(doc, joinPath(mount.prefix, path), item as Record<string, unknown>);
      Object.assign((doc.components.schemas ??= {}), generated.components?.schemas ?? {});
    }
    const part = module.documents?.[surface];
    if (!part) continue;
    if (part.info) doc.info = { ...part.info, version: packageJson.version };
    for (const [path, item] of Object.entries(part.paths ?? {})) addPath(doc, path, item);
    if (part.securitySchemes) Object.assign((doc.components.securitySchemes ??= {}), part.securitySchemes);
    if (part.schemas) Object.assign((doc.components.schemas ??= {}), part.schemas);
    if (part.security) doc.security = part.security;
    if (part.tags) doc.tags = [...(doc.tags ?? []), ...part.tags];
    if (part.webhooks) doc.webhooks = { ...doc.webhooks, ...part.webhooks };
  }
  if (doc.components.schemas && Object.keys(doc.components.schemas).length === 0) delete doc.components.schemas;
  return doc;
}

function addPath(doc: OpenApiDocument, path: string, item: Record<string, unknown>): void {
  doc.paths[path] = { ...doc.paths[path], ...item };
}

function joinPath(prefix: string, path: string): string {
  const joined = `${prefix.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
}
