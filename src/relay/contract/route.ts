// How an operation of the relay is declared: one call with its method, path, summary, body, success
// answers and error rows gives the createRoute config that the routes serve (@hono/zod-openapi checks
// the body and the id with it), the OpenAPI document is generated from, and the typed client reads.
import { createRoute, z, type RouteConfig } from '@hono/zod-openapi';
import { COMMON_ERRORS, RELAY_ERRORS, relayErrorSchema, type ErrorRow } from './errors.js';

/** Where the relay is mounted: every path of the contract is under it. */
export const RELAY_PREFIX = '/internal';

type Method = 'get' | 'post' | 'delete';
type SuccessStatus = 200 | 201 | 202 | 204;

/** The path parameter of every `{id}` path: any string (an unknown id is NOT_FOUND, not VALIDATION_ERROR). */
export const idParams = z.object({ id: z.string() });

interface Success<O extends z.ZodType | null> {
  description: string;
  /** null: an empty body (204). */
  schema: O;
}

export interface RouteSpec<
  M extends Method,
  P extends string,
  S extends SuccessStatus,
  O extends z.ZodType | null,
  B extends z.ZodType | undefined,
  Q extends z.ZodObject | undefined = undefined,
> {
  method: M;
  /** Under RELAY_PREFIX, with `{id}` for the resource's id. */
  path: P;
  summary: string;
  description?: string;
  /** The JSON body, checked before the handler runs (and documented from the same schema). */
  body?: B;
  /** The query parameters, checked before the handler runs (a GET's filters). */
  query?: Q;
  /** The success answers: usually one, all with the same body. */
  success: Record<S, Success<O>>;
  /** The errors it answers with besides COMMON_ERRORS (UNAUTHORIZED, MEDIASOUP_ERROR, INTERNAL_ERROR). */
  errors: readonly ErrorRow[];
}

type JsonContent<T> = { content: { 'application/json': { schema: T } } };

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
type RequestOf<P extends string, B, Q = undefined> = (P extends `${string}{id}${string}` ? { params: typeof idParams } : {}) &
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
  (B extends z.ZodType ? { body: { required: true } & JsonContent<B> } : {}) &
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
  (Q extends z.ZodObject ? { query: Q } : {});

/**
 * A route of the relay as its handlers and the typed client see it: the success answers only (errors
 * are thrown and answered by the app's onError, so no handler returns one); the config itself also
 * lists every error answer, for the document.
 */
export type RelayRoute<
  M extends Method,
  P extends string,
  S extends SuccessStatus,
  O extends z.ZodType | null,
  B extends z.ZodType | undefined,
  Q extends z.ZodObject | undefined = undefined,
> = {
  method: M;
  path: P;
  summary: string;
  operationId: string;
  description?: string;
  request: RequestOf<P, B, Q>;
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
  responses: { [K in S]: { description: string } & (O extends z.ZodType ? JsonContent<O> : {}) };
};

/** Any route of the contract. */
export type AnyRelayRoute = RouteConfig & { method: Method; operationId: string };

/**
 * @example
 * export const connectTransport = relayRoute({
 *   method: 'post', path: '/v1/transports/{id}/connect', summary: 'Connect a transport',
 *   body: connectTransportBody,
 *   success: { 200: { description: 'connected', schema: connectedSchema } },
 *   errors: [VALIDATION, notFoundRow('transport')],
 * })
 */
export function relayRoute<
  M extends Method,
  const P extends string,
  S extends SuccessStatus,
  O extends z.ZodType | null = null,
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
>(spec: RouteSpec<M, P, S, O, B, Q>): RelayRoute<M, P, S, O, B, Q> {
  const responses: Record<string, unknown> = {};
  for (const [status, { description, schema }] of Object.entries<Success<O>>(spec.success)) {
    responses[status] = schema ? { description, content: { 'application/json': { schema: documented(schema, 'output') } } } : { description };
  }
  const byStatus = new Map<number, ErrorRow[]>();
  for (const row of [...spec.errors, ...COMMON_ERRORS]) {
    const status = RELAY_ERRORS[row.code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), row]);
  }
  for (const [status, rows] of byStatus) {
    responses[status] = {
      description: rows.map((row) => `${row.code}: ${row.meaning}`).join('; '),
      content: {
        'application/json': {
          schema: errorDocument,
          examples: Object.fromEntries(rows.map((row) => [row.code, { value: { code: row.code, message: row.meaning } }])),
        },
      },
    };
  }
  // Every request's body is limited before any route sees it (src/app.ts, INTERNAL_BODY_LIMIT), a
  // bodyless operation's too: a client may send one anyway.
  {
    const meaning = 'request body exceeds 256 KiB';
    responses[413] = { description: `VALIDATION_ERROR: ${meaning}`, content: { 'application/json': { schema: errorDocument, examples: { VALIDATION_ERROR: { value: { code: 'VALIDATION_ERROR', message: meaning } } } } } };
  }
  const hasId = spec.path.includes('{id}');
  return createRoute({
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    tags: [tagOf(spec.path)],
    operationId: operationIdOf(spec.method, `${RELAY_PREFIX}${spec.path}`),
     
    ...(spec.description ? { description: spec.description } : {}),
    request: {
       
      ...(hasId ? { params: idParams } : {}),
      ...(spec.query ? { query: spec.query } : {}),
       
      ...(spec.body ? { body: { required: true, content: { 'application/json': { schema: documented(spec.body, 'input') } } } } : {}),
    },
    responses: responses as RouteConfig['responses'],
  }) as unknown as RelayRoute<M, P, S, O, B, Q>;
}

/**
 * The document's group of an operation: the resource its path names (`/v1/consumers/{id}/pause` →
 * `consumers`, as Swagger UI groups them); the service's own operations (`/info`, `/v1/drain`) are `service`.
 */
function tagOf(path: string): string {
  const resource = /^\/v1\/([a-z-]+)\//.exec(`${path}/`)?.[1];
  return resource && resource !== 'drain' ? resource : 'service';
}

/** `post` + `/internal/v1/transports/{id}/connect` → `postInternalV1TransportsIdConnect`. */
function operationIdOf(method: string, path: string): string {
  return `${method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, ch: string | undefined) => (ch ? ch.toUpperCase() : ''))}`;
}

/**
 * The schema with its JSON Schema as zod itself renders it (z.toJSONSchema, as the document always
 * had it), given to the OpenAPI generator as the schema's metadata: @asteasolutions/zod-to-openapi
 * reads a schema's zod `.meta()`, and a `type` in it stands for the whole description instead of what
 * the generator would derive. Checks are those of `schema`: `.meta()` returns a copy with its definition.
 */
function documented<T extends z.ZodType>(schema: T, io: 'input' | 'output'): T {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema.meta(json);
}

const errorDocument = documented(relayErrorSchema, 'output');
