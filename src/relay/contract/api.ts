// The relay's API as one type, built from the contract's routes (types only: nothing of the server
// runs in the client): what the typed client hands to Hono's RPC client, `hc<RelayApi>(`${origin}/internal`)`.
// The resource families come from their table (kinds/index.ts), which http/app.ts serves.
import type { RouteConfig, RouteConfigToTypedResponse } from '@hono/zod-openapi';
import type { Hono, ToSchema } from 'hono';
import type { z } from 'zod';
import type { FamilyContracts } from '../kinds/index.js';
import type * as iceServers from './ice-servers.js';
import type * as recordings from './recordings.js';
import type { AnyRelayRoute } from './route.js';
import type * as service from './service.js';
import type * as webhook from './webhook.js';

type RoutesOf<Family> = Extract<Family[keyof Family], AnyRelayRoute>;

/** Every route of the contract: each resource family's (kinds/index.ts), the recordings', the service's, TURN's and the webhook's. */
export type RelayRoutes =
  | { [F in keyof FamilyContracts]: RoutesOf<FamilyContracts[F]> }[keyof FamilyContracts]
  | RoutesOf<typeof recordings>
  | RoutesOf<typeof service>
  | RoutesOf<typeof iceServers>
  | RoutesOf<typeof webhook>;

/** `/v1/routers/{id}` → `/v1/routers/:id` (Hono's form). */
type HonoPath<P extends string> = P extends `${infer Start}{${infer Param}}${infer Rest}` ? `${Start}:${Param}${HonoPath<Rest>}` : P;

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
type JsonInput<R> = (R extends { request: { body: { content: { 'application/json': { schema: infer B extends z.ZodType } } } } } ? { json: z.input<B> } : {}) &
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
  (R extends { request: { query: infer Q extends z.ZodType } } ? { query: z.input<Q> } : {});

type SchemaOf<R> = R extends RouteConfig ? ToSchema<R['method'], HonoPath<R['path']>, JsonInput<R>, RouteConfigToTypedResponse<R>> : never;

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;

/** The relay's routes under `/internal`, as Hono's RPC client reads an app's type. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the identity of these type-level intersections, as in Hono's own types
export type RelayApi = Hono<{}, UnionToIntersection<SchemaOf<RelayRoutes>>, '/'>;
