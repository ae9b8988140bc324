// The typed client's methods for WebRTC transports: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface TransportsClient {
  createTransport(body: Wire.CreateTransportBody): Promise<Wire.Transport>;
  connectTransport(id: string, dtlsParameters: Wire.DtlsParameters): Promise<Wire.Connected>;
  closeTransport(id: string): Promise<void>;
}

export function transportsClient(kit: ClientKit): TransportsClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const { transports } = rpc.v1;
  return {
    createTransport: (body) => json(transports.$post({ json: body })),
    connectTransport: (id, dtlsParameters) => json(transports[':id'].connect.$post({ param: { id }, json: { dtlsParameters } })),
    closeTransport: (id) => empty(transports[':id'].$delete({ param: { id } })),
  };
}
