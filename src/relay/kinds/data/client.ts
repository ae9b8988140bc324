// The typed client's methods for data producers and consumers: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface DataClient {
  createDataProducer(body: Wire.CreateDataProducerBody): Promise<Wire.DataProducer>;
  closeDataProducer(id: string): Promise<void>;
  createDataConsumer(body: Wire.CreateDataConsumerBody): Promise<Wire.DataConsumer>;
  closeDataConsumer(id: string): Promise<void>;
}

export function dataClient(kit: ClientKit): DataClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const dataProducers = rpc.v1['data-producers'];
  const dataConsumers = rpc.v1['data-consumers'];
  return {
    createDataProducer: (body) => json(dataProducers.$post({ json: body })),
    closeDataProducer: (id) => empty(dataProducers[':id'].$delete({ param: { id } })),
    createDataConsumer: (body) => json(dataConsumers.$post({ json: body })),
    closeDataConsumer: (id) => empty(dataConsumers[':id'].$delete({ param: { id } })),
  };
}
