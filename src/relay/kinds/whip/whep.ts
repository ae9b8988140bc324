// POST /whep/{id}: a player's session. Its recv transport is on a router of its own whose codecs
// carry the offer's payload types (session-router.ts), so its consumers send RTP a browser keeps; the
// room's producers are copied there, one consumer each, in an offered receiving section of their kind
// (the consumer's mid is the section's). An endpoint without `producerIds` plays every producer of the
// room: those present at the start, and those that appear while the session is open, in a section left
// free (or freed by a producer that closed).
import { randomUUID } from 'node:crypto';
import type { types as ms } from 'mediasoup';
import { adopt, goneError } from '../../engine/call.js';
import type { OpsDeps } from '../../ops/deps.js';
import type { ProducerEntry, RouterEntry } from '../../registry/kinds.js';
import { resumeConsumer } from '../consumers/ops.js';
import { connectTransport } from '../transports/ops.js';
import type { Endpoint } from './endpoint.js';
import { writeAnswer, type AnswerSection, type HeaderExtension, type OfferedCodec, type SectionPlan } from './sdp.js';
import { offeredRouterCodecs, SessionRouter } from './session-router.js';
import { dropTransport, openTransport, planOffer, refusalOf, startSession, WhipRefusal, withSessionSlot, type Answered } from './session.js';

export async function playWhep(deps: OpsDeps, endpoint: Endpoint, offerText: string): Promise<Answered> {
  const { offer, plans, room } = planOffer(deps, endpoint, offerText);
  return withSessionSlot(deps, endpoint, async () => {
    const sessionId = randomUUID();
    let claimed: { router: SessionRouter; release: () => void } | undefined;
    let transport: ms.WebRtcTransport | undefined;
    let player: Player | undefined;
    try {
      claimed = await SessionRouter.claim(deps, endpoint.sessionRouters, room, offeredRouterCodecs(plans));
      const own = claimed.router;
      ({ transport } = await openTransport(deps, endpoint, sessionId, 'recv', { router: own.router, worker: own.part.worker, slot: own.part.slot }));
      transport.observer.once('close', claimed.release);
      await connectTransport(deps, transport.id, { role: offer.remoteRole, fingerprints: offer.fingerprints });
      player = new Player(deps, endpoint, room, own, transport, sessionId, plans);
      await player.start();
      if (endpoint.closed || transport.closed) throw new WhipRefusal(404, 'the endpoint was revoked meanwhile');
      const answer = writeAnswer(offer, transport, player.answerSections());
      const session = startSession(deps, endpoint, sessionId, transport, player.producerIds, player.consumerIds, offer.iceUfrag);
      await player.play();
      return { session, answer };
    } catch (error) {
      player?.stop();
      if (transport) dropTransport(deps, transport);
      claimed?.release();
      throw refusalOf(error);
    }
  });
}

/** One section of the offer a consumer is (or may later be) sent in. */
interface Slot {
  readonly plan: SectionPlan;
  /** The codecs and extensions the session's router can send there with the offer's types and ids. */
  readonly capabilities: ms.RtpCapabilities;
  consumer?: ms.Consumer;
  /** The consumer's answer (its codecs, ssrc) while the answer is not yet written. */
  answer?: AnswerSection;
}

class Player {
  readonly producerIds: string[] = [];
  readonly consumerIds: string[] = [];
  private readonly slots: Slot[];
  /** Every producer of the room, present and future: the endpoint has no `producerIds`. */
  private readonly follows: boolean;
  private readonly seen = new Set<string>();
  /** Producers to add, one after another (creations and the room's new producers arrive in any order). */
  private queue: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => {};
  /** Set once the answer is written: consumers made from then on start resumed, and a failure only leaves their producer out. */
  private answered = false;
  private stopped = false;

  constructor(
    private readonly deps: OpsDeps,
    private readonly endpoint: Endpoint,
    private readonly room: RouterEntry,
    private readonly own: SessionRouter,
    private readonly transport: ms.WebRtcTransport,
    private readonly sessionId: string,
    plans: SectionPlan[],
  ) {
    this.follows = endpoint.producerIds === undefined;
    this.slots = plans.map((plan) => ({ plan, capabilities: sectionCapabilities(plan, own.router.rtpCapabilities) })).filter((slot) => (slot.capabilities.codecs ?? []).length > 0);
  }

  /** Consumes the producers present now; when following the room, listens first so that none falls between. */
  async start(): Promise<void> {
    if (this.follows) {
      this.unsubscribe = this.deps.registry.onWhenAdded((kind, entry) => {
        if (kind === 'producer' && (entry as ProducerEntry).routerId === this.room.router.id) this.enqueue(entry as ProducerEntry);
      });
      this.transport.observer.once('close', () => this.stop());
    }
    const ids = this.endpoint.producerIds ?? [...this.deps.registry.all('producer')].filter((p) => p.routerId === this.room.router.id).map((p) => p.producer.id);
    for (const id of ids) {
      const entry = this.deps.registry.get('producer', id);
      if (entry) this.enqueue(entry);
    }
    await this.queue;
  }

  /** The answer's sections: those with a consumer, and (following the room) the free ones, sendonly without an ssrc yet. */
  answerSections(): Map<number, AnswerSection> {
    this.answered = true;
    const sections = new Map<number, AnswerSection>();
    for (const slot of this.slots) {
      if (slot.answer) sections.set(slot.plan.section.index, slot.answer);
      else if (this.follows) sections.set(slot.plan.section.index, { plan: answerPlan(slot.plan, slot.capabilities.codecs ?? [], slot.capabilities.headerExtensions ?? []), direction: 'sendonly' });
    }
    return sections;
  }

  /** The session started: its consumers resume, and those added from now on start resumed. */
  async play(): Promise<void> {
    for (const id of this.consumerIds) await resumeConsumer(this.deps, id);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
  }

  private enqueue(entry: ProducerEntry): void {
    if (this.seen.has(entry.producer.id)) return;
    this.seen.add(entry.producer.id);
    this.queue = this.queue.then(() => this.add(entry));
  }

  /** Consumes `entry` in a free section of its kind that offers its codec (none: it is not played). */
  private async add(entry: ProducerEntry): Promise<void> {
    const { deps, transport } = this;
    if (this.stopped || transport.closed || entry.producer.closed) return;
    const codec = entry.producer.rtpParameters.codecs[0];
    const slot = this.slots.find((s) => !s.consumer && s.plan.section.kind === entry.producer.kind && (s.capabilities.codecs ?? []).some((c) => c.mimeType.toLowerCase() === codec?.mimeType.toLowerCase()));
    if (!slot) return;
    const late = this.answered;
    try {
      const copyId = await this.own.bring(entry);
      const consumer = await deps.caps.reserve(this.room.router.id, 'consumer', async () => {
        const made = await deps.engine(
          'create consumer',
          () => transport.consume({ producerId: copyId, rtpCapabilities: slot.capabilities, paused: true, mid: slot.plan.section.mid, appData: { ...this.endpoint.appData, whepEndpointId: this.endpoint.id, whepSessionId: this.sessionId } }),
          [['transport', transport.id]],
          this.own.part.worker,
        );
        return adopt(made, () => {
          if (!deps.registry.has('transport', transport.id)) throw goneError('transport', transport.id, this.own.part.worker, 'create consumer');
          if (made.closed || !deps.registry.has('producer', entry.producer.id)) throw goneError('producer', entry.producer.id, this.own.part.worker, 'create consumer');
          deps.registry.add('consumer', { consumer: made, worker: this.own.part.worker, routerId: this.room.router.id, transportId: transport.id, producerId: entry.producer.id });
          return made;
        });
      });
      slot.consumer = consumer;
      // A section whose producer closed takes the next one that appears.
      consumer.observer.once('close', () => {
        if (slot.consumer === consumer) slot.consumer = undefined;
        this.seen.delete(entry.producer.id);
      });
      const params = consumer.rtpParameters;
      const encoding = params.encodings?.[0];
      slot.answer = {
        plan: answerPlan(slot.plan, params.codecs, params.headerExtensions ?? []),
        direction: 'sendonly',
        send: { ssrc: encoding!.ssrc!, ...(encoding?.rtx?.ssrc ? { rtxSsrc: encoding.rtx.ssrc } : {}), cname: params.rtcp?.cname ?? 'relay', msid: entry.producer.id },
      };
      this.producerIds.push(entry.producer.id);
      this.consumerIds.push(consumer.id);
      if (this.answered) await resumeConsumer(deps, consumer.id);
    } catch (error) {
      // A producer that closed meanwhile is simply not played. Before the answer another failure fails
      // the session (playWhep closes what was made); after it, the producer is left out.
      if (!deps.registry.has('producer', entry.producer.id) || transport.closed) return;
      if (!late) throw error;
      deps.logger.warn({ err: error, producerId: entry.producer.id, whepSessionId: this.sessionId }, 'WHEP session could not add a new producer');
    }
  }
}

/**
 * What the session's router can send in a section with the offer's payload types: the media codecs it
 * offered (the router was made with their types), an RTX only where the router's RTX type is one the
 * section offered for it, and the extensions whose id the offer gave the router's (a consumer writes
 * the router's ids, and a browser refuses an answer that moves one).
 */
function sectionCapabilities(plan: SectionPlan, caps: ms.RtpCapabilities): ms.RtpCapabilities {
  const kind = plan.section.kind as ms.MediaKind;
  const offeredPt = new Map(plan.offered.map((c) => [c.payloadType, c]));
  const codecs = (caps.codecs ?? []).filter((cap) => {
    if (cap.kind !== kind || cap.preferredPayloadType === undefined) return false;
    const offered = offeredPt.get(cap.preferredPayloadType);
    if (!offered || offered.mimeType.toLowerCase() !== cap.mimeType.toLowerCase()) return false;
    return !cap.mimeType.toLowerCase().endsWith('/rtx') || Number(offered.parameters.apt) === Number((cap.parameters as Record<string, unknown> | undefined)?.apt);
  });
  const headerExtensions = (caps.headerExtensions ?? []).filter((h) => h.kind === kind && plan.headerExtensions.some((e) => e.uri === h.uri && e.id === h.preferredId));
  return { codecs, headerExtensions };
}

/** The section's plan as the answer writes it: these codecs (feedback the offer gave them only) and extensions. */
function answerPlan(plan: SectionPlan, codecs: readonly (ms.RtpCodecParameters | ms.RtpCodecCapability)[], extensions: readonly (ms.RtpHeaderExtensionParameters | ms.RtpHeaderExtension)[]): SectionPlan {
  const offered = new Map(plan.offered.map((c) => [c.payloadType, c]));
  const written = codecs.map((c): OfferedCodec => {
    const payloadType = 'payloadType' in c ? c.payloadType : c.preferredPayloadType!;
    const offeredFeedback = offered.get(payloadType)?.rtcpFeedback ?? [];
    return {
      payloadType,
      mimeType: c.mimeType,
      clockRate: c.clockRate,
      ...(c.channels === undefined ? {} : { channels: c.channels }),
      parameters: (c.parameters ?? {}) as Record<string, string | number>,
      rtcpFeedback: (c.rtcpFeedback ?? [])
        .filter((f) => offeredFeedback.some((o) => o.type === f.type && (o.parameter ?? '') === (f.parameter ?? '')))
        .map((f) => (f.parameter ? { type: f.type, parameter: f.parameter } : { type: f.type })),
    };
  });
  const headerExtensions: HeaderExtension[] = extensions.map((h) => ({ uri: h.uri, id: 'id' in h ? h.id : h.preferredId }));
  return { ...plan, rids: [], codecs: written, headerExtensions };
}
