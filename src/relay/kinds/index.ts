// The relay's resource families, one folder each (kinds/<family>/), one row each here: the family's
// contract (its routes and schemas), its ops, the factory of its routes and its resource kinds (its
// row.ts). Everything that lists families or kinds reads this table: the service binds every family's
// ops and gives the kinds to the registry (media-service.ts), the internal app mounts every family's
// routes (http/app.ts), the typed client's API type is the union of every family's contract
// (contract/api.ts), and the kinds in order are KINDS. A new kind is its folder (contract.ts, ops.ts,
// routes.ts, row.ts) and its row here.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import * as consumersContract from './consumers/contract.js';
import * as controlsContract from './controls/contract.js';
import * as dataContract from './data/contract.js';
import * as pipesContract from './pipes/contract.js';
import * as plainContract from './plain/contract.js';
import * as producersContract from './producers/contract.js';
import * as routersContract from './routers/contract.js';
import { roomStateContract } from './routers/contract.js';
import * as transportsContract from './transports/contract.js';
import * as whipContract from './whip/contract.js';
import { consumersRoutes } from './consumers/routes.js';
import { controlsRoutes } from './controls/routes.js';
import { dataRoutes } from './data/routes.js';
import type { TurnSettings } from '../http/ice-servers.routes.js';
import { pipesRoutes } from './pipes/routes.js';
import { plainRoutes } from './plain/routes.js';
import { producersRoutes } from './producers/routes.js';
import { routersRoutes } from './routers/routes.js';
import { transportsRoutes } from './transports/routes.js';
import { whipRoutes } from './whip/routes.js';
import * as consumers from './consumers/ops.js';
import * as controls from './controls/ops.js';
import * as data from './data/ops.js';
import type { Bound, FamilyMedia } from '../ops/index.js';
import * as pipes from './pipes/ops.js';
import * as plain from './plain/ops.js';
import * as producers from './producers/ops.js';
import * as routers from './routers/ops.js';
import * as transports from './transports/ops.js';
import * as whip from './whip/ops.js';
import { CONSUMER_KINDS } from './consumers/row.js';
import { DATA_KINDS } from './data/row.js';
import { PIPE_KINDS } from './pipes/row.js';
import { PLAIN_KINDS } from './plain/row.js';
import { PRODUCER_KINDS } from './producers/row.js';
import { ROUTER_KINDS } from './routers/row.js';
import { TRANSPORT_KINDS } from './transports/row.js';
import { WHIP_KINDS } from './whip/row.js';
import type { KindTable } from './row.js';
import { pluralsOf } from '../registry/kinds.js';

/** What every family's routes may read beside their ops. */
export interface FamilySettings {
  /** TURN: when set, transports' answers carry `iceServers`. */
  readonly turn?: TurnSettings;
  /** Where a request's public origin may come from (TRUST_PROXY): WHIP/WHEP endpoint URLs. */
  readonly trustProxy?: 'none' | 'fly' | 'xff';
}

interface Family<Contract, Ops, Kinds> {
  /** The contract whose routes the family serves (contract/api.ts reads its type). */
  readonly contract: Contract;
  readonly ops: Ops;
  readonly routes: (media: FamilyMedia<Ops>, settings: FamilySettings) => OpenAPIHono<AppEnv>;
  /** Its resource kinds (its row.ts); a family of operations on other kinds' resources has none. */
  readonly kinds: Kinds;
}

/** Infers a row's types and checks its routes against its own ops. */
function family<Contract, Ops, Kinds>(row: Family<Contract, Ops, Kinds>): Family<Contract, Ops, Kinds> {
  return row;
}

/** Checks that every kind a row names (parents, closeWith, standsFor) is a kind of the table. */
function defineKinds<
  const T extends {
    [K in keyof T]: { readonly parents: readonly Extract<keyof T, string>[]; readonly closeWith: readonly Extract<keyof T, string>[]; readonly standsFor?: Extract<keyof T, string> };
  },
>(kinds: T): T {
  return kinds;
}

// In the kinds' order, parents before children: the registry's counts, the metrics and the enums follow it.
// The routers' routes read KINDS and ROUTER_STATE, made from these rows below, when the app is built.
const ROWS = {
  routers: family({ contract: routersContract, ops: routers, routes: (media) => routersRoutes(media, ROUTER_STATE, KINDS), kinds: ROUTER_KINDS }),
  transports: family({ contract: transportsContract, ops: transports, routes: transportsRoutes, kinds: TRANSPORT_KINDS }),
  producers: family({ contract: producersContract, ops: producers, routes: producersRoutes, kinds: PRODUCER_KINDS }),
  consumers: family({ contract: consumersContract, ops: consumers, routes: consumersRoutes, kinds: CONSUMER_KINDS }),
  controls: family({ contract: controlsContract, ops: controls, routes: controlsRoutes, kinds: {} }),
  data: family({ contract: dataContract, ops: data, routes: dataRoutes, kinds: DATA_KINDS }),
  pipes: family({ contract: pipesContract, ops: pipes, routes: pipesRoutes, kinds: PIPE_KINDS }),
  plain: family({ contract: plainContract, ops: plain, routes: plainRoutes, kinds: PLAIN_KINDS }),
  whip: family({ contract: whipContract, ops: whip, routes: whipRoutes, kinds: WHIP_KINDS }),
};

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;
type Rows = typeof ROWS;

/**
 * Every resource kind, in order: the families' kinds one after the other. The machinery is given it
 * (the registry's options); its types read the same rows through KindTable, so a kind a family declares
 * there without giving its row here fails to compile.
 */
export const KINDS: KindTable = defineKinds(Object.assign({}, ...Object.values(ROWS).map((row) => row.kinds)) as UnionToIntersection<Rows[keyof Rows]['kinds']>);

/** The kinds' plural names in order: the counts of /internal/info and the `kind` label of the metrics. */
export const KIND_PLURALS = pluralsOf(KINDS);

/** GET /v1/routers/{id}: a router's state lists every kind that stands for a transport, so it is made from the table. */
const ROUTER_STATE = roomStateContract(KINDS);

/** The rows, the routers' contract completed with GET /v1/routers/{id} (its routes already serve it). */
export const FAMILIES = { ...ROWS, routers: { ...ROWS.routers, contract: { ...routersContract, ...ROUTER_STATE } } };

type Families = typeof FAMILIES;

/** Every op of every family, by name. */
export type AllOps = UnionToIntersection<Families[keyof Families]['ops']>;
export const OPS = Object.assign({}, ...Object.values(FAMILIES).map((row) => row.ops)) as AllOps;

/** The relay's operations, deps already given: `ops.createRouter(input)`. */
export type MediaOps = Bound<AllOps>;

/** The contract modules of the families, by name (types only: what contract/api.ts unions). */
export type FamilyContracts = { [K in keyof Families]: Families[K]['contract'] };
