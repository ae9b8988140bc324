// The OpenAPI document of one surface, generated from the composed modules: the operations their
// OpenAPIHono mounts declare with createRoute, plus what each module adds (info, tags, security,
// streams, webhooks, the responses any operation of the surface may give). Imports no area:
// modules are known through src/http/module.ts only.
import { OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../package.json' with { type: 'json' };
import type { DocumentPart, Module, Surface } from '../http/module.js';

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

/** The body of an error under /internal (src/http/internal-errors.ts), whichever module answers it. */
const internalError = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: {} } },
  required: ['code', 'message'],
  additionalProperties: false,
};
const internalErrorResponse = (code: string, meaning: string) => ({
  description: `${code}: ${meaning}`,
  content: { 'application/json': { schema: internalError, examples: { [code]: { value: { code, message: meaning } } } } },
});

/**
 * What the app itself puts on every internal path (src/app.ts): the token guard before anything
 * else, and the internal error shape for what no module answers itself. A module's own statement wins.
 */
const INTERNAL_SURFACE: DocumentPart = {
  info: {
    title: DEFAULT_TITLES.internal,
    description: 'For the signaling backend only. Every /internal/ path needs the X-Internal-Token header. Errors are {code, message, details?}.',
  },
  securitySchemes: { internalToken: { type: 'apiKey', in: 'header', name: 'X-Internal-Token' } },
  security: [{ internalToken: [] }],
  responses: {
    401: internalErrorResponse('UNAUTHORIZED', 'X-Internal-Token missing or wrong'),
    500: internalErrorResponse('INTERNAL_ERROR', 'any other failure'),
  },
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * @example buildDocument('internal', [relay, accounts, observability])
 */
export function buildDocument(surface: Surface, modules: readonly Module[]): OpenApiDocument {
  const doc: OpenApiDocument = { openapi: '3.1.0', info: { title: DEFAULT_TITLES[surface], version: packageJson.version }, paths: {}, components: {} };
  // The responses any operation of the surface may give, first statement of a status first.
  const common: Array<Record<string, unknown>> = [];
  const apply = (part: DocumentPart) => {
    if (part.info) doc.info = { ...part.info, version: packageJson.version };
    for (const [path, item] of Object.entries(part.paths ?? {})) addPath(doc, path, item);
    if (part.securitySchemes) Object.assign((doc.components.securitySchemes ??= {}), part.securitySchemes);
    if (part.schemas) Object.assign((doc.components.schemas ??= {}), part.schemas);
    if (part.security) doc.security = part.security;
    if (part.tags) doc.tags = [...(doc.tags ?? []), ...part.tags];
    if (part.webhooks) doc.webhooks = { ...doc.webhooks, ...part.webhooks };
    if (part.responses) common.push(part.responses);
  };
  // The surface's own statements first: a module's part may override them.
  const { responses: surfaceResponses, ...surfacePart } = surface === 'internal' ? INTERNAL_SURFACE : {};
  apply(surfacePart);
  for (const module of modules) {
    for (const mount of module.mounts) {
      // Answered on every listener (/healthz, /readyz), documented once: in the public document.
      const documented = mount.surface === surface || (mount.surface === 'every' && surface === 'public');
      if (!documented || !(mount.routes instanceof OpenAPIHono)) continue;
      const generated = mount.routes.getOpenAPI31Document({ openapi: '3.1.0', info: doc.info });
      for (const [path, item] of Object.entries(generated.paths ?? {})) addPath(doc, joinPath(mount.prefix, path), item as Record<string, unknown>);
      Object.assign((doc.components.schemas ??= {}), generated.components?.schemas ?? {});
    }
    const part = module.documents?.[surface];
    if (part) apply(part);
  }
  if (surfaceResponses) common.push(surfaceResponses);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method) || typeof operation !== 'object' || operation === null) continue;
      const op = operation as { operationId?: string; responses?: Record<string, unknown>; security?: unknown[] };
      // The responses any operation of the surface may give, where the operation states none for that
      // status; not the token's 401 to one that declares it needs none (`security: []`, the docs page).
      const responses = { ...op.responses };
      const open = Array.isArray(op.security) && op.security.length === 0;
      for (const part of common) for (const [status, response] of Object.entries(part)) if (!(open && status === '401')) responses[status] ??= response;
      // A copy: the operation may be a module's own object.
      item[method] = { ...op, operationId: op.operationId ?? operationId(method, path), responses };
    }
  }
  if (doc.components.schemas && Object.keys(doc.components.schemas).length === 0) delete doc.components.schemas;
  return doc;
}

/** `postApiV1AuthLogin` for POST /api/v1/auth/login, `deleteApiV1AuthSessionsId` for DELETE /api/v1/auth/sessions/{id}. */
function operationId(method: string, path: string): string {
  return `${method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, ch: string | undefined) => (ch ? ch.toUpperCase() : ''))}`;
}

function addPath(doc: OpenApiDocument, path: string, item: Record<string, unknown>): void {
  doc.paths[path] = { ...doc.paths[path], ...item };
}

function joinPath(prefix: string, path: string): string {
  const joined = `${prefix.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
}
