// The typed client's methods for pipe transports (one relay to another): assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface PipesClient {
  /** Cascading (src/client/pipes.ts does the whole sequence): a pipe transport on a router, SRTP unless `enableSrtp: false`. */
  createPipeTransport(body: Wire.CreatePipeTransportBody): Promise<Wire.PipeTransport>;
  connectPipeTransport(id: string, body: Wire.ConnectPipeTransportBody): Promise<Wire.Connected>;
  createPipeConsumer(id: string, producerId: string): Promise<Wire.PipeConsumer>;
  createPipeProducer(id: string, body: Wire.CreatePipeProducerBody): Promise<Wire.PipeProducer>;
  closePipeTransport(id: string): Promise<void>;
}

export function pipesClient(kit: ClientKit): PipesClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const pipeTransports = rpc.v1['pipe-transports'];
  return {
    createPipeTransport: (body) => json(pipeTransports.$post({ json: body })),
    connectPipeTransport: (id, body) => json(pipeTransports[':id'].connect.$post({ param: { id }, json: body })),
    createPipeConsumer: (id, producerId) => json(pipeTransports[':id'].consumers.$post({ param: { id }, json: { producerId } })),
    createPipeProducer: (id, body) => json(pipeTransports[':id'].producers.$post({ param: { id }, json: body })),
    closePipeTransport: (id) => empty(pipeTransports[':id'].$delete({ param: { id } })),
  };
}
