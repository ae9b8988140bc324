// The typed client's methods for consumers: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface ConsumersClient {
  /** Always created paused: resume it once the client's receive transport is connected. */
  createConsumer(body: Wire.CreateConsumerBody): Promise<Wire.Consumer>;
  resumeConsumer(id: string): Promise<Wire.ConsumerState>;
  closeConsumer(id: string): Promise<void>;
}

export function consumersClient(kit: ClientKit): ConsumersClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const { consumers } = rpc.v1;
  return {
    createConsumer: (body) => json(consumers.$post({ json: body })),
    resumeConsumer: (id) => json(consumers[':id'].resume.$post({ param: { id } })),
    closeConsumer: (id) => empty(consumers[':id'].$delete({ param: { id } })),
  };
}
