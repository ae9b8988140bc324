// The typed client's methods for routers: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface RoutersClient {
  createRouter(body?: Wire.CreateRouterBody): Promise<Wire.Router>;
  /** Every open router `{id, appData, createdAt, workerPid, counts}`, oldest first. */
  listRouters(): Promise<Wire.RouterList>;
  /** One router with its transports, producers and consumers. */
  getRouter(id: string): Promise<Wire.RouterState>;
  closeRouter(id: string): Promise<void>;
}

export function routersClient(kit: ClientKit): RoutersClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const { routers } = rpc.v1;
  return {
    createRouter: (body = {}) => json(routers.$post({ json: body })),
    listRouters: () => json(routers.$get()),
    getRouter: (id) => json(routers[':id'].$get({ param: { id } })),
    closeRouter: (id) => empty(routers[':id'].$delete({ param: { id } })),
  };
}
