// What a WHIP and a WHEP session share: the refusals of the public side, the offer's preamble (read,
// bound, plan, 422), the slot a session takes against its endpoint's cap, its transport, and its
// start and end (a session ends, and says so, when its transport closes, however that happens).
import { randomUUID } from 'node:crypto';
import type { types as ms } from 'mediasoup';
import { RelayError } from '../../errors.js';
import type { OpsDeps } from '../../ops/deps.js';
import type { RouterEntry } from '../../registry/kinds.js';
import { closeTransport, createTransport, type TransportPlace } from '../transports/ops.js';
import type { Endpoint, Session, SessionEndReason } from './endpoint.js';
import { WhipRefusal } from './refusal.js';
import { planSections, readOffer, SdpError, type Offer, type SectionPlan } from './sdp.js';

export { WhipRefusal };


export interface Answered {
  readonly session: Session;
  readonly answer: string;
}

/** The transport a session runs on; its appData carries the endpoint's, and which endpoint and session it is. */
export async function openTransport(deps: OpsDeps, endpoint: Endpoint, sessionId: string, direction: 'send' | 'recv', on?: TransportPlace) {
  return createTransport(
    deps,
    {
    routerId: endpoint.routerId,
    direction,
      appData: { ...endpoint.appData, [`${endpoint.kind}EndpointId`]: endpoint.id, [`${endpoint.kind}SessionId`]: sessionId },
    },
    on,
  );
}

/** Counts a session being set up against the endpoint's cap for the duration of `open`. */
export async function withSessionSlot<T>(deps: OpsDeps, endpoint: Endpoint, open: () => Promise<T>): Promise<T> {
  const max = deps.config.whip.maxSessionsPerEndpoint[endpoint.kind];
  if (deps.draining()) throw new WhipRefusal(503, 'the relay is draining');
  if (endpoint.sessions.size + endpoint.pending >= max) throw new WhipRefusal(429, `the endpoint holds its maximum of ${max} session${max === 1 ? '' : 's'}`);
  endpoint.pending += 1;
  try {
    return await open();
  } finally {
    endpoint.pending -= 1;
  }
}

/** Registers a session on its endpoint: it ends (and says so) when its transport closes, however that happens. */
export function startSession(deps: OpsDeps, endpoint: Endpoint, id: string, transport: ms.WebRtcTransport, producerIds: string[], consumerIds: string[], remoteIceUfrag: string): Session {
  const session: Session = {
    id,
    remoteIceUfrag,
    transportId: transport.id,
    etag: `"${randomUUID()}"`,
    producerIds,
    consumerIds,
    close(reason: SessionEndReason) {
      if (transport.closed) return;
      session.endReason = reason;
      if (deps.registry.has('transport', transport.id)) closeTransport(deps, transport.id);
      else transport.close();
    },
  };
  endpoint.sessions.set(id, session);
  const base = { endpointId: endpoint.id, sessionId: id, transportId: transport.id, routerId: endpoint.routerId, appData: endpoint.appData };
  transport.observer.once('close', () => {
    endpoint.sessions.delete(id);
    endpoint.publish({ type: `${endpoint.kind}.session.ended`, ...base, producerIds: [...session.producerIds], reason: session.endReason ?? 'transport_closed' });
  });
  endpoint.publish({ type: `${endpoint.kind}.session.started`, ...base, producerIds: [...producerIds] });
  return session;
}

/** Maps a failure of an op under a session to what the client is told. */
export function refusalOf(error: unknown): unknown {
  if (error instanceof SdpError) return new WhipRefusal(400, error.message);
  if (error instanceof RelayError) {
    if (error.code === 'ROUTER_CAPACITY_EXCEEDED') return new WhipRefusal(429, error.message);
    if (error.code === 'DRAINING') return new WhipRefusal(503, error.message);
    if (error.code === 'NOT_FOUND') return new WhipRefusal(404, error.message);
    if (error.code === 'VALIDATION_ERROR') return new WhipRefusal(400, `the offer's media cannot be taken: ${error.message}`);
    if (error.code === 'CAN_NOT_CONSUME') return new WhipRefusal(422, error.message);
  }
  return error;
}

/**
 * The preamble of POST /whip and /whep: the offer read and bounded (400), and its sections planned
 * against the room's codecs, sending ones (WHIP) or receiving ones (WHEP); 422 when none is left.
 */
export function planOffer(deps: OpsDeps, endpoint: Endpoint, offerText: string): { offer: Offer; plans: SectionPlan[]; room: RouterEntry } {
  const wanted = endpoint.kind === 'whip' ? 'send' : 'recv';
  try {
    const offer = readOffer(offerText);
    const room = deps.registry.require('router', endpoint.routerId);
    const plans = planSections(offer, room.router.rtpCapabilities, wanted).filter((p) => p.codecs.length > 0);
    if (plans.length === 0) {
      throw new WhipRefusal(422, wanted === 'send' ? 'no audio or video section the room can carry (codecs, or no section sends)' : 'no receiving audio or video section the room can carry');
    }
    return { offer, plans, room };
  } catch (error) {
    throw refusalOf(error);
  }
}

/** Closes a transport a failed session setup made (it takes what was made on it along). */
export function dropTransport(deps: OpsDeps, transport: ms.WebRtcTransport): void {
  if (transport.closed) return;
  deps.registry.markClosing(transport, 'api');
  transport.close();
}
