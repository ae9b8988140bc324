// The typed client's methods for producers: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface ProducersClient {
  createProducer(body: Wire.CreateProducerBody): Promise<Wire.Producer>;
  closeProducer(id: string): Promise<void>;
}

export function producersClient(kit: ClientKit): ProducersClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const { producers } = rpc.v1;
  return {
    createProducer: (body) => json(producers.$post({ json: body })),
    closeProducer: (id) => empty(producers[':id'].$delete({ param: { id } })),
  };
}
