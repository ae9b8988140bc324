// The WHIP and WHEP endpoints' rows in the kinds table (kinds/index.ts): each under its router, closed
// with it, capped per router, listed in the router's state (never with its token).
import type { types as ms } from 'mediasoup';
import { z } from 'zod';
import { formatTime } from '../../../time.js';
import { kindRow } from '../row.js';
import type { Endpoint } from './endpoint.js';
import { endpointStateSchema } from './contract.js';

export interface WhipEndpointEntry {
  readonly whipEndpoint: Endpoint;
  /** The worker of the room when it was made: the registry indexes every entry by one. */
  readonly worker: ms.Worker;
  readonly routerId: string;
}

export interface WhepEndpointEntry {
  readonly whepEndpoint: Endpoint;
  readonly worker: ms.Worker;
  readonly routerId: string;
}

/** One endpoint in a router's state. */
export function endpointStateView(endpoint: Endpoint): z.output<typeof endpointStateSchema> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    createdAt: formatTime(endpoint.createdAt),
    expiresAt: endpoint.expiresAt.toISOString(),
    appData: endpoint.appData,
    ...(endpoint.producerIds ? { producerIds: [...endpoint.producerIds] } : {}),
    sessions: [...endpoint.sessions.values()].map((s) => ({ id: s.id, transportId: s.transportId, producerIds: [...s.producerIds] })),
  };
}

export const WHIP_KINDS = {
  whipEndpoint: kindRow<WhipEndpointEntry>()({
    name: 'whipEndpoint',
    plural: 'whipEndpoints',
    parents: ['router'],
    closeWith: ['router'],
    roomCap: 'maxWhipEndpointsPerRouter',
    roomState: {
      schema: z.array(endpointStateSchema).describe('WHIP endpoints (POST /v1/whip-endpoints), without their tokens'),
      view: (entry) => endpointStateView(entry.whipEndpoint),
    },
    watch(entry, publish) {
      entry.whipEndpoint.publish = publish;
    },
    closed: ({ whipEndpoint, routerId }, reason) => ({
      type: 'whipEndpoint.closed',
      endpointId: whipEndpoint.id,
      routerId,
      appData: whipEndpoint.appData,
      reason: reason as never,
    }),
  }),
  whepEndpoint: kindRow<WhepEndpointEntry>()({
    name: 'whepEndpoint',
    plural: 'whepEndpoints',
    parents: ['router'],
    closeWith: ['router'],
    roomCap: 'maxWhepEndpointsPerRouter',
    // The pipe transports between the room and its sessions' routers: two ports of the range each pair.
    ports: (entry) => [...entry.whepEndpoint.sessionRouters.values()].reduce((sum, shared) => sum + (shared.router?.portsHeld() ?? 0), 0),
    roomState: {
      schema: z.array(endpointStateSchema).describe('WHEP endpoints (POST /v1/whep-endpoints), without their tokens'),
      view: (entry) => endpointStateView(entry.whepEndpoint),
    },
    watch(entry, publish) {
      entry.whepEndpoint.publish = publish;
    },
    closed: ({ whepEndpoint, routerId }, reason) => ({
      type: 'whepEndpoint.closed',
      endpointId: whepEndpoint.id,
      routerId,
      appData: whepEndpoint.appData,
      reason: reason as never,
    }),
  }),
};

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    whipEndpoint: (typeof WHIP_KINDS)['whipEndpoint'];
    whepEndpoint: (typeof WHIP_KINDS)['whepEndpoint'];
  }
}
