// The relay's resource families, one folder each (kinds/<family>/), one row each here: the family's
// contract (its routes and schemas), its ops and the factory of its routes. Everything that lists
// families reads this table: the service binds every family's ops (media-service.ts), the internal
// app mounts every family's routes (http/app.ts) and the typed client's API type is the union of
// every family's contract (contract/api.ts). The resource kinds the families define are their rows
// (kinds/<family>/row.ts), gathered in resources.ts. A new kind is its folder (contract.ts, ops.ts,
// routes.ts, row.ts), its row here and its rows in resources.ts.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import * as consumersContract from './consumers/contract.js';
import * as controlsContract from './controls/contract.js';
import * as dataContract from './data/contract.js';
import * as pipesContract from './pipes/contract.js';
import * as plainContract from './plain/contract.js';
import * as producersContract from './producers/contract.js';
import * as routersContract from './routers/contract.js';
import * as transportsContract from './transports/contract.js';
import { consumersRoutes } from './consumers/routes.js';
import { controlsRoutes } from './controls/routes.js';
import { dataRoutes } from './data/routes.js';
import type { TurnSettings } from '../http/ice-servers.routes.js';
import { pipesRoutes } from './pipes/routes.js';
import { plainRoutes } from './plain/routes.js';
import { producersRoutes } from './producers/routes.js';
import { routersRoutes } from './routers/routes.js';
import { transportsRoutes } from './transports/routes.js';
import * as consumers from './consumers/ops.js';
import * as controls from './controls/ops.js';
import * as data from './data/ops.js';
import type { Bound, FamilyMedia } from '../ops/index.js';
import * as pipes from './pipes/ops.js';
import * as plain from './plain/ops.js';
import * as producers from './producers/ops.js';
import * as routers from './routers/ops.js';
import * as transports from './transports/ops.js';

/** What every family's routes may read beside their ops. */
export interface FamilySettings {
  /** TURN: when set, transports' answers carry `iceServers`. */
  readonly turn?: TurnSettings;
}

interface Family<Contract, Ops> {
  /** The contract module whose routes the family serves (contract/api.ts reads its type). */
  readonly contract: Contract;
  readonly ops: Ops;
  readonly routes: (media: FamilyMedia<Ops>, settings: FamilySettings) => OpenAPIHono<AppEnv>;
}

/** Infers a row's types and checks its routes against its own ops. */
function family<Contract, Ops>(row: Family<Contract, Ops>): Family<Contract, Ops> {
  return row;
}

export const FAMILIES = {
  routers: family({ contract: routersContract, ops: routers, routes: routersRoutes }),
  transports: family({ contract: transportsContract, ops: transports, routes: transportsRoutes }),
  producers: family({ contract: producersContract, ops: producers, routes: producersRoutes }),
  consumers: family({ contract: consumersContract, ops: consumers, routes: consumersRoutes }),
  controls: family({ contract: controlsContract, ops: controls, routes: controlsRoutes }),
  data: family({ contract: dataContract, ops: data, routes: dataRoutes }),
  pipes: family({ contract: pipesContract, ops: pipes, routes: pipesRoutes }),
  plain: family({ contract: plainContract, ops: plain, routes: plainRoutes }),
};

type Families = typeof FAMILIES;
type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;

/** Every op of every family, by name. */
export type AllOps = UnionToIntersection<Families[keyof Families]['ops']>;
export const OPS = Object.assign({}, ...Object.values(FAMILIES).map((row) => row.ops)) as AllOps;

/** The relay's operations, deps already given: `ops.createRouter(input)`. */
export type MediaOps = Bound<AllOps>;

/** The contract modules of the families, by name (types only: what contract/api.ts unions). */
export type FamilyContracts = { [K in keyof Families]: Families[K]['contract'] };
