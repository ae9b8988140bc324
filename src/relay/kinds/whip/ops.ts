// WHIP and WHEP: the endpoints the signaling server mints, and the sessions clients open on them. A
// session is made of the ordinary ops (a WebRTC transport, its connect, producers or consumers), so
// its parts are the room's resources as any other (capped, listed, closed with the room, their
// events); a failure on the way closes the transport, which takes whatever was made on it along.
import { randomUUID } from 'node:crypto';
import type { types as ms } from 'mediasoup';
import { RelayError } from '../../errors.js';
import type { OpsDeps } from '../../ops/deps.js';
import { createConsumer, resumeConsumer } from '../consumers/ops.js';
import { createProducer } from '../producers/ops.js';
import { closeTransport, connectTransport, createTransport } from '../transports/ops.js';
import { TTL_S, type CreateWhepEndpointBody, type CreateWhipEndpointBody } from './contract.js';
import { Endpoint, newToken, tokenDigest, type EndpointKind, type Session, type SessionEndReason } from './endpoint.js';
import { planSections, producerParameters, readFragment, readOffer, SdpError, writeAnswer, writeFragment, type AnswerSection, type Offer, type SectionPlan } from './sdp.js';

/** A refusal of the public side: its HTTP status and a short text (public.ts answers it as text/plain). */
export class WhipRefusal extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 412 | 415 | 422 | 428 | 429 | 503,
    message: string,
  ) {
    super(message);
    this.name = 'WhipRefusal';
  }
}

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

export interface Answered {
  readonly session: Session;
  readonly answer: string;
}

/** The transport a session runs on; its appData carries the endpoint's, and which endpoint and session it is. */
async function openTransport(deps: OpsDeps, endpoint: Endpoint, sessionId: string, direction: 'send' | 'recv') {
  return createTransport(deps, {
    routerId: endpoint.routerId,
    direction,
    appData: { ...endpoint.appData, [`${endpoint.kind}EndpointId`]: endpoint.id, [`${endpoint.kind}SessionId`]: sessionId },
  });
}

/** Counts a session being set up against the endpoint's cap for the duration of `open`. */
async function withSessionSlot<T>(deps: OpsDeps, endpoint: Endpoint, open: () => Promise<T>): Promise<T> {
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
function startSession(deps: OpsDeps, endpoint: Endpoint, id: string, transport: ms.WebRtcTransport, producerIds: string[], consumerIds: string[]): Session {
  const session: Session = {
    id,
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
function refusalOf(error: unknown): unknown {
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

function parseOffer(text: string): Offer {
  try {
    return readOffer(text);
  } catch (error) {
    throw refusalOf(error);
  }
}

/**
 * POST /whip/{id}: the offer's sending audio and video sections become producers on a new send
 * transport (simulcast rids as encodings); the answer takes those sections and refuses the rest.
 */
export async function publishWhip(deps: OpsDeps, endpoint: Endpoint, offerText: string): Promise<Answered> {
  const offer = parseOffer(offerText);
  const room = deps.registry.require('router', endpoint.routerId);
  let plans: SectionPlan[];
  try {
    plans = planSections(offer, room.router.rtpCapabilities, 'send').filter((p) => p.codecs.length > 0);
  } catch (error) {
    throw refusalOf(error);
  }
  if (plans.length === 0) throw new WhipRefusal(422, 'no audio or video section the room can carry (codecs, or no section sends)');
  return withSessionSlot(deps, endpoint, async () => {
    const sessionId = randomUUID();
    const entry = await openTransport(deps, endpoint, sessionId, 'send').catch((error: unknown) => {
      throw refusalOf(error);
    });
    const { transport } = entry;
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
      const session = startSession(deps, endpoint, sessionId, transport, producerIds, []);
      return { session, answer };
    } catch (error) {
      // Nothing left behind: the transport takes its producers along.
      if (!transport.closed) {
        deps.registry.markClosing(transport, 'api');
        transport.close();
      }
      throw refusalOf(error);
    }
  });
}

/**
 * POST /whep/{id}: one recv transport, one consumer per producer the endpoint plays (its list, or every
 * producer of the room), each in an offered receiving section of its kind.
 */
export async function playWhep(deps: OpsDeps, endpoint: Endpoint, offerText: string): Promise<Answered> {
  const offer = parseOffer(offerText);
  const room = deps.registry.require('router', endpoint.routerId);
  let plans: SectionPlan[];
  try {
    plans = planSections(offer, room.router.rtpCapabilities, 'recv').filter((p) => p.codecs.length > 0);
  } catch (error) {
    throw refusalOf(error);
  }
  if (plans.length === 0) throw new WhipRefusal(422, 'no receiving audio or video section the room can carry');
  const producers = (endpoint.producerIds ?? [...deps.registry.all('producer')].filter((p) => p.routerId === endpoint.routerId).map((p) => p.producer.id))
    .map((id) => deps.registry.get('producer', id))
    .filter((p) => p !== undefined);
  return withSessionSlot(deps, endpoint, async () => {
    const sessionId = randomUUID();
    const entry = await openTransport(deps, endpoint, sessionId, 'recv').catch((error: unknown) => {
      throw refusalOf(error);
    });
    const { transport } = entry;
    try {
      await connectTransport(deps, transport.id, { role: offer.remoteRole, fingerprints: offer.fingerprints });
      const taken = new Map<number, AnswerSection>();
      const producerIds: string[] = [];
      const consumerIds: string[] = [];
      const free = [...plans];
      for (const producer of producers) {
        const at = free.findIndex((p) => p.section.kind === producer.producer.kind);
        if (at === -1) continue;
        const plan = free.splice(at, 1)[0]!;
        const rtpCapabilities = capabilitiesOf(plan, room.router.rtpCapabilities);
        const consumer = await createConsumer(deps, {
          transportId: transport.id,
          producerId: producer.producer.id,
          rtpCapabilities: rtpCapabilities as never,
          appData: { ...endpoint.appData, whepEndpointId: endpoint.id, whepSessionId: sessionId },
        });
        const params = consumer.consumer.rtpParameters;
        const encoding = params.encodings?.[0];
        taken.set(plan.section.index, {
          plan: { ...plan, rids: [], codecs: answerCodecs(plan, params), headerExtensions: params.headerExtensions ?? [] },
          direction: 'sendonly',
          send: { ssrc: encoding!.ssrc!, ...(encoding?.rtx?.ssrc ? { rtxSsrc: encoding.rtx.ssrc } : {}), cname: params.rtcp?.cname ?? 'relay', msid: producer.producer.id },
        });
        producerIds.push(producer.producer.id);
        consumerIds.push(consumer.consumer.id);
      }
      if (endpoint.closed || transport.closed) throw new WhipRefusal(404, 'the endpoint was revoked meanwhile');
      const answer = writeAnswer(offer, transport, taken);
      const session = startSession(deps, endpoint, sessionId, transport, producerIds, consumerIds);
      for (const id of consumerIds) await resumeConsumer(deps, id);
      return { session, answer };
    } catch (error) {
      if (!transport.closed) {
        deps.registry.markClosing(transport, 'api');
        transport.close();
      }
      throw refusalOf(error);
    }
  });
}

/** The capabilities a WHEP section offers, as mediasoup's consume() takes them: its codec and the router's matching extensions. */
function capabilitiesOf(plan: SectionPlan, routerCaps: ms.RtpCapabilities): ms.RtpCapabilities {
  const kind = plan.section.kind as ms.MediaKind;
  const codecs = (routerCaps.codecs ?? []).filter((cap) => cap.kind === kind && plan.codecs.some((c) => c.mimeType.toLowerCase() === cap.mimeType.toLowerCase() || (cap.mimeType.toLowerCase().endsWith('/rtx') && c.mimeType.toLowerCase().endsWith('/rtx'))));
  // mediasoup writes a consumer's extensions with the router's ids: only those the offer gave the same id
  // are taken (a browser refuses an answer that moves an id), the others are left out.
  const headerExtensions = (routerCaps.headerExtensions ?? []).filter((h) => h.kind === kind && plan.headerExtensions.some((e) => e.uri === h.uri && e.id === h.preferredId));
  return { codecs, headerExtensions };
}

/** The consumer's codecs in the answer: the relay sends them with the router's payload types. */
function answerCodecs(plan: SectionPlan, params: ms.RtpParameters): SectionPlan['codecs'] {
  return params.codecs.map((c) => ({
    payloadType: c.payloadType,
    mimeType: c.mimeType,
    clockRate: c.clockRate,
    ...(c.channels === undefined ? {} : { channels: c.channels }),
    parameters: (c.parameters ?? {}) as Record<string, string | number>,
    rtcpFeedback: (c.rtcpFeedback ?? []).map((f) => (f.parameter ? { type: f.type, parameter: f.parameter } : { type: f.type })),
  }));
}

/** DELETE on a session: it ends, its transport (and what was made on it) closes. */
export function endSession(_deps: OpsDeps, endpoint: Endpoint, sessionId: string): void {
  requireSession(endpoint, sessionId).close('api');
}

/**
 * PATCH on a session (application/trickle-ice-sdpfrag): `If-Match` must name its ETag (428 without,
 * 412 on a stale one). Candidates need nothing (mediasoup is ICE-lite: it learns the client's address
 * from its checks); a new ufrag/pwd is an ICE restart, answered with the relay's new ones and a new ETag.
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
  if (fragment.iceUfrag === undefined) return { session };
  const { transport } = deps.registry.require('transport', session.transportId);
  const iceParameters = await deps.engine('restart ice', () => transport.restartIce(), [['transport', session.transportId]]);
  session.etag = `"${randomUUID()}"`;
  return { session, fragment: writeFragment({ iceParameters, iceCandidates: transport.iceCandidates }, '0') };
}
