// What a relay kind's client methods are built from (src/relay/kinds/<kind>/client.ts): Hono's RPC
// client, and the two ways a call answers. A kind's factory takes the kit as an opaque handle and opens
// it in its body with the relay's API type (`openKit<RelayApi>(kit)`): no declaration of the client's
// files names that type, whose usage search made dts-bundle-generator take 80 s more per package build.
import type { Hono } from 'hono';
import type { ClientResponse, hc } from 'hono/client';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the constraint of Hono's hc
type AnyApp = Hono<any, any, any>;

export interface OpenKit<Api extends AnyApp> {
  rpc: ReturnType<typeof hc<Api>>;
  /** The success body of a typed call, or a RelayClientError for anything else. */
  json: <T>(call: Promise<ClientResponse<T, number, 'json'>>) => Promise<T>;
  /** A call whose success has no body (204), or a RelayClientError. */
  empty: (call: Promise<ClientResponse<unknown, number, string>>) => Promise<void>;
}

declare const opaque: unique symbol;
/** The kit as a kind's factory receives it: `openKit<RelayApi>(kit)` gives its parts. */
export interface ClientKit {
  readonly [opaque]: 'ClientKit';
}

export function makeKit<Api extends AnyApp>(kit: OpenKit<Api>): ClientKit {
  return kit as unknown as ClientKit;
}

export function openKit<Api extends AnyApp>(kit: ClientKit): OpenKit<Api> {
  return kit as unknown as OpenKit<Api>;
}
