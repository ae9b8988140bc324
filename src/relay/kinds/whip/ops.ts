// WHIP and WHEP: the endpoints the signaling server mints, and the sessions clients open on them. A
// session is made of the ordinary ops (a WebRTC transport, its connect, producers or consumers), so
// its parts are the room's resources as any other (capped, listed, closed with the room, their
// events); a failure on the way closes the transport, which takes whatever was made on it along.
import { randomUUID } from 'node:crypto';
import { RelayError } from '../../errors.js';
import type { OpsDeps } from '../../ops/deps.js';
import { createProducer } from '../producers/ops.js';
import { connectTransport } from '../transports/ops.js';
import { TTL_S, type CreateWhepEndpointBody, type CreateWhipEndpointBody } from './contract.js';
import { Endpoint, newToken, tokenDigest, type EndpointKind, type Session } from './endpoint.js';
import { readFragment, writeFragment } from './fragment.js';
import { producerParameters, writeAnswer, type AnswerSection } from './sdp.js';
import { dropTransport, openTransport, planOffer, refusalOf, startSession, WhipRefusal, withSessionSlot, type Answered } from './session.js';

export { WhipRefusal } from './session.js';
export { playWhep } from './whep.js';

const KIND_OF = { whip: 'whipEndpoint', whep: 'whepEndpoint' } as const;

export interface MintedEndpoint {
  readonly endpoint: Endpoint;
  /** Shown once; the endpoint keeps its digest only. */
  readonly token: string;
}

async function mint(deps: OpsDeps, kind: EndpointKind, input: CreateWhipEndpointBody & { producerIds?: string[] }, origin: string): Promise<MintedEndpoint> {
  const { registry, caps } = deps;
  const room = registry.require('router', input.routerId);
  if (deps.draining()) throw new RelayError('DRAINING', 'the relay is draining: mint the endpoint on another relay');
  for (const producerId of input.producerIds ?? []) {
    const producer = registry.require('producer', producerId);
    if (producer.routerId !== input.routerId) throw new RelayError('NOT_FOUND', `producer not found in router ${input.routerId}: ${producerId}`, { resource: 'producer', id: producerId });
  }
  return caps.reserve(input.routerId, KIND_OF[kind], () => {
    const token = newToken();
    const ttl = input.ttlS ?? TTL_S.default;
    const endpoint = new Endpoint(kind, input.routerId, input.appData ?? {}, tokenDigest(token), new Date(Date.now() + ttl * 1000), input.producerIds ? [...new Set(input.producerIds)] : undefined);
    endpoint.url = `${deps.config.whip.publicUrl ?? origin}/${kind}/${endpoint.id}`;
    if (kind === 'whip') registry.add('whipEndpoint', { whipEndpoint: endpoint, worker: room.worker, routerId: input.routerId });
    else registry.add('whepEndpoint', { whepEndpoint: endpoint, worker: room.worker, routerId: input.routerId });
    return Promise.resolve({ endpoint, token });
  });
}

/** `origin`: the public origin as the client reaches it, when WHIP_PUBLIC_URL is unset. */
export function createWhipEndpoint(deps: OpsDeps, input: CreateWhipEndpointBody, origin: string): Promise<MintedEndpoint> {
  return mint(deps, 'whip', input, origin);
}

export function createWhepEndpoint(deps: OpsDeps, input: CreateWhepEndpointBody, origin: string): Promise<MintedEndpoint> {
  return mint(deps, 'whep', input, origin);
}

export function closeWhipEndpoint(deps: OpsDeps, id: string): void {
  const { whipEndpoint } = deps.registry.require('whipEndpoint', id);
  deps.registry.markClosing(whipEndpoint, 'api');
  whipEndpoint.close();
}

export function closeWhepEndpoint(deps: OpsDeps, id: string): void {
  const { whepEndpoint } = deps.registry.require('whepEndpoint', id);
  deps.registry.markClosing(whepEndpoint, 'api');
  whepEndpoint.close();
}

/** The endpoint a public request names, its bearer token checked (404 before 401: a revoked endpoint is gone). */
export function authorizeEndpoint(deps: OpsDeps, kind: EndpointKind, id: string, authorization: string | undefined): Endpoint {
  const entry = deps.registry.get(KIND_OF[kind], id) as { whipEndpoint?: Endpoint; whepEndpoint?: Endpoint } | undefined;
  const endpoint = entry?.whipEndpoint ?? entry?.whepEndpoint;
  if (!endpoint || endpoint.closed) throw new WhipRefusal(404, `no such ${kind.toUpperCase()} endpoint`);
  const match = /^Bearer ([\x21-\x7e]{1,512})$/.exec(authorization ?? '');
  if (!match) throw new WhipRefusal(401, 'a bearer token is required (Authorization: Bearer <token>)');
  if (!endpoint.accepts(match[1]!)) throw new WhipRefusal(401, 'wrong token');
  if (endpoint.expired()) throw new WhipRefusal(401, 'the token has expired');
  return endpoint;
}

/** The session `sessionId` of an authorized endpoint. */
export function requireSession(endpoint: Endpoint, sessionId: string): Session {
  const session = endpoint.sessions.get(sessionId);
  if (!session) throw new WhipRefusal(404, 'no such session');
  return session;
}

/**
 * POST /whip/{id}: the offer's sending audio and video sections become producers on a new send
 * transport (simulcast rids as encodings); the answer takes those sections and refuses the rest.
 */
export async function publishWhip(deps: OpsDeps, endpoint: Endpoint, offerText: string): Promise<Answered> {
  const { offer, plans } = planOffer(deps, endpoint, offerText);
  return withSessionSlot(deps, endpoint, async () => {
    const sessionId = randomUUID();
    const { transport } = await openTransport(deps, endpoint, sessionId, 'send').catch((error: unknown) => {
      throw refusalOf(error);
    });
    try {
      await connectTransport(deps, transport.id, { role: offer.remoteRole, fingerprints: offer.fingerprints });
      const producerIds: string[] = [];
      for (const plan of plans) {
        const producer = await createProducer(deps, {
          transportId: transport.id,
          kind: plan.section.kind as 'audio' | 'video',
          rtpParameters: producerParameters(plan),
          appData: { ...endpoint.appData, whipEndpointId: endpoint.id, whipSessionId: sessionId },
        });
        producerIds.push(producer.id);
      }
      if (endpoint.closed || transport.closed) throw new WhipRefusal(404, 'the endpoint was revoked meanwhile');
      const answer = writeAnswer(offer, transport, new Map(plans.map((plan): [number, AnswerSection] => [plan.section.index, { plan, direction: 'recvonly' }])));
      const session = startSession(deps, endpoint, sessionId, transport, producerIds, [], offer.iceUfrag);
      return { session, answer };
    } catch (error) {
      // Nothing left behind: the transport takes its producers along.
      dropTransport(deps, transport);
      throw refusalOf(error);
    }
  });
}

/** DELETE on a session: it ends, its transport (and what was made on it) closes. */
export function endSession(_deps: OpsDeps, endpoint: Endpoint, sessionId: string): void {
  requireSession(endpoint, sessionId).close('api');
}

/**
 * PATCH on a session (application/trickle-ice-sdpfrag): `If-Match` must name its ETag (428 without,
 * 412 on a stale one). Candidates (under the session's ufrag, or none) need nothing: mediasoup is
 * ICE-lite and learns the client's address from its checks. A new ufrag/pwd is an ICE restart,
 * answered with the relay's new ones and a new ETag.
 */
export async function patchSession(deps: OpsDeps, endpoint: Endpoint, sessionId: string, ifMatch: string | undefined, fragmentText: string): Promise<{ session: Session; fragment?: string }> {
  const session = requireSession(endpoint, sessionId);
  if (ifMatch === undefined) throw new WhipRefusal(428, 'If-Match is required');
  if (ifMatch.trim() !== '*' && ifMatch.trim() !== session.etag) throw new WhipRefusal(412, 'If-Match does not match the session\'s ETag');
  let fragment;
  try {
    fragment = readFragment(fragmentText);
  } catch (error) {
    throw refusalOf(error);
  }
  // The session's own ufrag (or none): trickled candidates. A new one: an ICE restart.
  if (fragment.iceUfrag === undefined || fragment.iceUfrag === session.remoteIceUfrag) return { session };
  if (fragment.icePwd === undefined) throw new WhipRefusal(400, 'an ICE restart (a new a=ice-ufrag) needs its a=ice-pwd');
  const { transport } = deps.registry.require('transport', session.transportId);
  const iceParameters = await deps.engine('restart ice', () => transport.restartIce(), [['transport', session.transportId]]);
  session.etag = `"${randomUUID()}"`;
  session.remoteIceUfrag = fragment.iceUfrag;
  return { session, fragment: writeFragment({ iceParameters, iceCandidates: transport.iceCandidates }, '0') };
}
