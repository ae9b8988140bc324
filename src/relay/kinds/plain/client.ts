// The typed client's methods for plain RTP transports: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface PlainClient {
  /** Plain RTP (ffmpeg, GStreamer, OBS): produce or consume on it with createProducer/createConsumer, its id as transportId. */
  createPlainTransport(body: Wire.CreatePlainTransportBody): Promise<Wire.PlainTransport>;
  connectPlainTransport(id: string, body: Wire.ConnectPlainTransportBody): Promise<Wire.Connected>;
  closePlainTransport(id: string): Promise<void>;
}

export function plainClient(kit: ClientKit): PlainClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const plainTransports = rpc.v1['plain-transports'];
  return {
    createPlainTransport: (body) => json(plainTransports.$post({ json: body })),
    connectPlainTransport: (id, body) => json(plainTransports[':id'].connect.$post({ param: { id }, json: body })),
    closePlainTransport: (id) => empty(plainTransports[':id'].$delete({ param: { id } })),
  };
}
