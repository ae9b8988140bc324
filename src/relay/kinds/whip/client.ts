// The typed client's methods for WHIP and WHEP endpoints: assembled into RelayClient by
// src/client/relay-client.ts. Only types are imported, so the client package bundles this file
// without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface WhipClient {
  /** A WHIP URL and bearer token (shown once) for a publisher: OBS, GStreamer, a browser page. */
  createWhipEndpoint(body: Wire.CreateWhipEndpointBody): Promise<Wire.MintedEndpoint>;
  /** A WHEP URL and bearer token for a player of the room (or of the listed producers). */
  createWhepEndpoint(body: Wire.CreateWhepEndpointBody): Promise<Wire.MintedEndpoint>;
  /** Revokes a WHIP endpoint: its token answers 404, its sessions end. */
  closeWhipEndpoint(id: string): Promise<void>;
  closeWhepEndpoint(id: string): Promise<void>;
}

export function whipClient(kit: ClientKit): WhipClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const whip = rpc.v1['whip-endpoints'];
  const whep = rpc.v1['whep-endpoints'];
  return {
    createWhipEndpoint: (body) => json(whip.$post({ json: body })),
    createWhepEndpoint: (body) => json(whep.$post({ json: body })),
    closeWhipEndpoint: (id) => empty(whip[':id'].$delete({ param: { id } })),
    closeWhepEndpoint: (id) => empty(whep[':id'].$delete({ param: { id } })),
  };
}
