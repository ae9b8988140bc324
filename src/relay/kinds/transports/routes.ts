// WebRTC transports: the contract's routes (contract.ts) -> ops -> views.
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import { closeTransport, connectTransport, createTransport, type iceCandidateSchema, type transportSchema } from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import type { TransportEntry } from '../../registry/kinds.js';
import { relayIceServers, transportUserKey, type TurnSettings } from '../../http/ice-servers.routes.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

/** `turn`: the TURN configuration; when set, a new transport's answer carries its `iceServers`. */
export function transportsRoutes(media: FamilyMedia<typeof ops>, { turn }: { turn?: TurnSettings }) {
  return relayRouter()
    .openapi(withJsonBody(createTransport), async (c) => {
      const body = c.req.valid('json');
      const entry = await media.forRequest(c.get('requestId')).createTransport(body);
      const view = transportView(entry);
      if (!turn) return c.json(view, 201);
      return c.json({ ...view, iceServers: relayIceServers(turn, transportUserKey(view.id, body.appData)).iceServers }, 201);
    })
    .openapi(withJsonBody(connectTransport), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).connectTransport(c.req.valid('param').id, c.req.valid('json').dtlsParameters);
      return c.json({ id: entry.transport.id, connected: true as const }, 200);
    })
    .openapi(closeTransport, (c) => {
      media.closeTransport(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

/**
 * One shape whatever the engine: mediasoup 3.11 names the candidate's address `ip`, current
 * mediasoup (and mediasoup-client) `address`; both are filled.
 */
export function iceCandidateView(candidate: ms.IceCandidate): z.output<typeof iceCandidateSchema> {
  const named = candidate as unknown as { ip?: string; address?: string };
  const address = (named.address ?? named.ip)!;
  return {
    foundation: candidate.foundation,
    priority: candidate.priority,
    address,
    ip: address,
    protocol: candidate.protocol,
    port: candidate.port,
    type: candidate.type,
    ...(candidate.tcpType ? { tcpType: candidate.tcpType } : {}),
  };
}

export function transportView({ transport, routerId, direction }: TransportEntry): z.output<typeof transportSchema> {
  return {
    id: transport.id,
    routerId,
    direction,
    iceParameters: transport.iceParameters,
    iceCandidates: transport.iceCandidates.map(iceCandidateView),
    dtlsParameters: transport.dtlsParameters,
    ...(transport.sctpParameters ? { sctpParameters: transport.sctpParameters } : {}),
  };
}
