// What a relay kind's client methods are built from (src/relay/kinds/<kind>/client.ts): Hono's RPC
// client over the relay's API type, and the two ways a call answers. A leaf: types and nothing else.
import type { ClientResponse, hc } from 'hono/client';
import type { RelayApi } from '../relay/contract/api.js';

export type RelayRpc = ReturnType<typeof hc<RelayApi>>;

export interface ClientKit {
  rpc: RelayRpc;
  /** The success body of a typed call, or a RelayClientError for anything else. */
  json: <T>(call: Promise<ClientResponse<T, number, 'json'>>) => Promise<T>;
  /** A call whose success has no body (204), or a RelayClientError. */
  empty: (call: Promise<ClientResponse<unknown, number, string>>) => Promise<void>;
}
