// The SDP of WHIP and WHEP: a client's offer read with sdp-transform (a kept parser of the whole
// grammar, so no hand-rolled line splitting decides what mediasoup gets), bounded before any of it
// reaches the engine, mapped to mediasoup's RTP parameters (producers) or capabilities (consumers),
// and the relay's answer written from the transport's ICE/DTLS parameters. mediasoup is ICE-lite and
// the DTLS server unless the offer insists on being one.
import { randomInt } from 'node:crypto';
import type { types as ms } from 'mediasoup';
import sdpTransform, { type SessionDescription } from 'sdp-transform';
import type { CreateProducerBody } from '../producers/contract.js';

type MediaAttributes = SessionDescription['media'][number];

/** The bounds of an offer, checked before it is parsed (size, lines) and after (sections, candidates, values). */
export const SDP_BOUNDS = {
  bytes: 64 * 1024,
  lines: 2000,
  mediaSections: 16,
  /** Lines of one media section. */
  attributesPerSection: 256,
  candidates: 64,
  codecsPerSection: 64,
  headerExtensionsPerSection: 32,
  rids: 4,
  fmtpParameters: 32,
  tokenLength: 64,
  fragmentBytes: 16 * 1024,
} as const;

/** An offer the relay will not take: answered 400 with the reason. */
export class SdpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SdpError';
  }
}

export type MediaKind = 'audio' | 'video';

/** One media section of an offer, as the relay reads it. */
export interface OfferSection {
  readonly index: number;
  readonly kind: MediaKind | 'other';
  readonly mid: string;
  readonly direction: string;
  readonly raw: MediaAttributes;
}

export interface Offer {
  readonly session: SessionDescription;
  readonly sections: OfferSection[];
  readonly iceUfrag: string;
  readonly icePwd: string;
  readonly fingerprints: { algorithm: FingerprintAlgorithm; value: string }[];
  /** The offerer's DTLS role as the engine's connect() takes it (the remote's role). */
  readonly remoteRole: 'client' | 'server';
}

const FINGERPRINT_ALGORITHMS = ['sha-1', 'sha-224', 'sha-256', 'sha-384', 'sha-512'] as const;
type FingerprintAlgorithm = (typeof FINGERPRINT_ALGORITHMS)[number];
const TOKEN = /^[A-Za-z0-9_+/=.-]+$/;
export const ICE_CHARS = /^[A-Za-z0-9+/]+$/;
const MID = /^[A-Za-z0-9_-]{1,32}$/;
const RID = /^[A-Za-z0-9_-]{1,16}$/;

/** Counts lines and checks the size before sdp-transform reads a byte of it. */
export function checkSdpSize(text: string, what = 'offer'): void {
  if (Buffer.byteLength(text) > SDP_BOUNDS.bytes) throw new SdpError(`${what} exceeds ${SDP_BOUNDS.bytes} bytes`);
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (++lines > SDP_BOUNDS.lines) throw new SdpError(`${what} exceeds ${SDP_BOUNDS.lines} lines`);
  }
}

/** Parses and bounds an offer; throws SdpError with what is wrong. */
export function readOffer(text: string): Offer {
  checkSdpSize(text);
  if (!text.startsWith('v=0')) throw new SdpError('not an SDP offer (it must begin with v=0)');
  let session: SessionDescription;
  try {
    session = sdpTransform.parse(text);
  } catch {
    throw new SdpError('unparsable SDP');
  }
  const media = session.media ?? [];
  if (media.length === 0) throw new SdpError('the offer has no media section');
  if (media.length > SDP_BOUNDS.mediaSections) throw new SdpError(`the offer has ${media.length} media sections, at most ${SDP_BOUNDS.mediaSections} are taken`);
  let candidates = 0;
  const mids = new Set<string>();
  const sections = media.map((m, index): OfferSection => {
    candidates += m.candidates?.length ?? 0;
    if (candidates > SDP_BOUNDS.candidates) throw new SdpError(`the offer has more than ${SDP_BOUNDS.candidates} candidates`);
    const attributes = Object.values(m).reduce<number>((n, v) => n + (Array.isArray(v) ? v.length : 1), 0);
    if (attributes > SDP_BOUNDS.attributesPerSection) throw new SdpError(`media section ${index} has more than ${SDP_BOUNDS.attributesPerSection} attributes`);
    const mid = m.mid === undefined ? String(index) : String(m.mid);
    if (!MID.test(mid)) throw new SdpError(`media section ${index}: mid must be 1-32 of [A-Za-z0-9_-]`);
    if (mids.has(mid)) throw new SdpError(`media section ${index}: mid ${mid} is used twice`);
    mids.add(mid);
    const kind = m.type === 'audio' || m.type === 'video' ? m.type : 'other';
    return { index, kind, mid, direction: m.direction ?? session.direction ?? 'sendrecv', raw: m };
  });
  const first = media[0]!;
  const iceUfrag = String(first.iceUfrag ?? session.iceUfrag ?? '');
  const icePwd = String(first.icePwd ?? session.icePwd ?? '');
  if (!ICE_CHARS.test(iceUfrag) || iceUfrag.length < 4 || iceUfrag.length > 256) throw new SdpError('the offer lacks a valid a=ice-ufrag');
  if (!ICE_CHARS.test(icePwd) || icePwd.length < 22 || icePwd.length > 256) throw new SdpError('the offer lacks a valid a=ice-pwd');
  const fingerprint = first.fingerprint ?? session.fingerprint;
  const algorithm = fingerprint?.type.toLowerCase();
  if (!fingerprint || !FINGERPRINT_ALGORITHMS.includes(algorithm as FingerprintAlgorithm) || !/^[0-9A-Fa-f:]{2,200}$/.test(fingerprint.hash)) {
    throw new SdpError('the offer lacks a valid a=fingerprint');
  }
  const setup = String(first.setup ?? session.setup ?? 'actpass');
  if (!['actpass', 'active', 'passive'].includes(setup)) throw new SdpError('a=setup must be actpass, active or passive');
  return {
    session,
    sections,
    iceUfrag,
    icePwd,
    fingerprints: [{ algorithm: algorithm as FingerprintAlgorithm, value: fingerprint.hash }],
    remoteRole: setup === 'passive' ? 'server' : 'client',
  };
}

/** A codec of an offer's section: its payload type there and what the relay reads of it. */
export interface OfferedCodec {
  payloadType: number;
  mimeType: string;
  clockRate: number;
  channels?: number;
  parameters: Record<string, string | number>;
  rtcpFeedback: { type: string; parameter?: string }[];
}

/** The codecs a section offers, in the m-line's order (its preference), each bounded. */
function offeredCodecs(section: OfferSection): OfferedCodec[] {
  const m = section.raw;
  const order = String(m.payloads ?? '')
    .split(' ')
    .filter(Boolean)
    .map(Number);
  if (order.length > SDP_BOUNDS.codecsPerSection) throw new SdpError(`media section ${section.index} offers more than ${SDP_BOUNDS.codecsPerSection} payload types`);
  const codecs: OfferedCodec[] = [];
  for (const pt of order) {
    if (!Number.isInteger(pt) || pt < 0 || pt > 127) throw new SdpError(`media section ${section.index}: payload type ${pt} is not 0-127`);
    const rtp = m.rtp.find((r) => r.payload === pt);
    if (!rtp || !TOKEN.test(rtp.codec) || rtp.codec.length > SDP_BOUNDS.tokenLength) continue;
    if (!Number.isInteger(rtp.rate) || rtp.rate! < 1000 || rtp.rate! > 200_000) continue;
    const channels = rtp.encoding === undefined ? undefined : Number(rtp.encoding);
    if (channels !== undefined && (!Number.isInteger(channels) || channels < 1 || channels > 8)) continue;
    const fmtp = m.fmtp.find((f) => f.payload === pt);
    const parameters: Record<string, string | number> = {};
    if (fmtp) {
      if (fmtp.config.length > 1024) throw new SdpError(`media section ${section.index}: a=fmtp:${pt} is too long`);
      const parsed = sdpTransform.parseParams(fmtp.config);
      const entries = Object.entries(parsed);
      if (entries.length > SDP_BOUNDS.fmtpParameters) throw new SdpError(`media section ${section.index}: a=fmtp:${pt} has too many parameters`);
      for (const [key, value] of entries) {
        if (!TOKEN.test(key) || key.length > SDP_BOUNDS.tokenLength) continue;
        if (typeof value === 'number' && Number.isFinite(value)) parameters[key] = value;
        else if (typeof value === 'string' && value.length <= 256) parameters[key] = value;
      }
    }
    const rtcpFeedback = (m.rtcpFb ?? [])
      .filter((f) => String(f.payload) === String(pt) || f.payload === '*')
      .filter((f) => TOKEN.test(f.type) && (f.subtype === undefined || TOKEN.test(f.subtype)))
      .slice(0, 16)
      .map((f) => (f.subtype ? { type: f.type, parameter: f.subtype } : { type: f.type }));
    codecs.push({ payloadType: pt, mimeType: `${section.kind}/${rtp.codec}`, clockRate: rtp.rate!, ...(channels === undefined ? {} : { channels }), parameters, rtcpFeedback });
  }
  return codecs;
}

/** Whether an offered codec is one the router carries (mime type, clock rate, channels, H264 mode and profile, VP9 profile). */
function matches(offered: OfferedCodec, cap: ms.RtpCodecCapability): boolean {
  if (offered.mimeType.toLowerCase() !== cap.mimeType.toLowerCase() || offered.clockRate !== cap.clockRate) return false;
  if (cap.kind === 'audio' && (offered.channels ?? 1) !== (cap.channels ?? 1)) return false;
  const mime = cap.mimeType.toLowerCase();
  const params = (cap.parameters ?? {}) as Record<string, unknown>;
  if (mime === 'video/h264') {
    if (Number(offered.parameters['packetization-mode'] ?? 0) !== Number(params['packetization-mode'] ?? 0)) return false;
    const profile = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '42e01f').slice(0, 2).toLowerCase();
    if (profile(offered.parameters['profile-level-id']) !== profile(params['profile-level-id'])) return false;
  }
  if (mime === 'video/vp9' && Number(offered.parameters['profile-id'] ?? 0) !== Number(params['profile-id'] ?? 0)) return false;
  return true;
}

/** The header extensions of a section that the router's capabilities list for its kind, bounded. */
function headerExtensionsOf(section: OfferSection, caps: ms.RtpCapabilities): HeaderExtension[] {
  const ext = section.raw.ext ?? [];
  if (ext.length > SDP_BOUNDS.headerExtensionsPerSection) throw new SdpError(`media section ${section.index} has more than ${SDP_BOUNDS.headerExtensionsPerSection} a=extmap`);
  return ext
    .filter((e) => Number.isInteger(e.value) && e.value >= 1 && e.value <= 14)
    .filter((e) => (caps.headerExtensions ?? []).some((h) => h.kind === section.kind && h.uri === e.uri))
    .map((e) => ({ uri: e.uri, id: e.value }));
}

/** An a=extmap the relay takes: its URI (one of the router's) and its id. */
export interface HeaderExtension {
  readonly uri: string;
  readonly id: number;
}

/** A section the relay takes (its producer's or consumer's part) or refuses (port 0). */
export interface SectionPlan {
  readonly section: OfferSection;
  /** The codec (and its RTX) the relay answers with; none: the section is refused. */
  readonly codecs: OfferedCodec[];
  readonly headerExtensions: HeaderExtension[];
  readonly rids: string[];
  /** Every media codec of the section the room carries, in the offer's order, and their RTX: what a WHEP session may send there. */
  readonly offered: OfferedCodec[];
}

/** For each section, the router's codec it can carry (first in the offer's order) and its RTX. */
export function planSections(offer: Offer, caps: ms.RtpCapabilities, wanted: 'send' | 'recv'): SectionPlan[] {
  return offer.sections.map((section) => {
    const refused: SectionPlan = { section, codecs: [], headerExtensions: [], rids: [], offered: [] };
    if (section.kind === 'other' || section.raw.port === 0) return refused;
    const sends = section.direction === 'sendonly' || section.direction === 'sendrecv';
    const receives = section.direction === 'recvonly' || section.direction === 'sendrecv';
    if ((wanted === 'send' && !sends) || (wanted === 'recv' && !receives)) return refused;
    const offered = offeredCodecs(section);
    const capCodecs = (caps.codecs ?? []).filter((c) => c.kind === section.kind);
    const carried = offered.filter((o) => !/\/(rtx|red|ulpfec|flexfec-03)$/i.test(o.mimeType) && capCodecs.some((cap) => matches(o, cap)));
    const chosen = carried[0];
    if (!chosen) return refused;
    const rtxOf = (codec: OfferedCodec) => offered.find((o) => o.mimeType.toLowerCase().endsWith('/rtx') && Number(o.parameters.apt) === codec.payloadType);
    const rtx = rtxOf(chosen);
    const rids = ridsOf(section);
    const withRtx = carried.flatMap((codec) => {
      const repair = rtxOf(codec);
      return repair ? [codec, { ...repair, parameters: { apt: codec.payloadType }, rtcpFeedback: [] }] : [codec];
    });
    return { section, codecs: rtx ? [chosen, { ...rtx, parameters: { apt: chosen.payloadType }, rtcpFeedback: [] }] : [chosen], headerExtensions: headerExtensionsOf(section, caps), rids, offered: withRtx };
  });
}

/** The `send` rids of a simulcast section, in the a=simulcast order (paused ones left out). */
function ridsOf(section: OfferSection): string[] {
  const m = section.raw;
  const declared = (m.rids ?? []).filter((r) => r.direction === 'send').map((r) => String(r.id));
  if (declared.length === 0) return [];
  if (declared.length > SDP_BOUNDS.rids) throw new SdpError(`media section ${section.index} has more than ${SDP_BOUNDS.rids} rids`);
  for (const rid of declared) if (!RID.test(rid)) throw new SdpError(`media section ${section.index}: a rid must be 1-16 of [A-Za-z0-9_-]`);
  const simulcast = m.simulcast;
  if (!simulcast) return declared.slice(0, 1);
  const list = simulcast.dir1 === 'send' ? simulcast.list1 : simulcast.dir2 === 'send' ? simulcast.list2 : undefined;
  const ordered = String(list ?? '')
    .split(';')
    .map((alt) => alt.split(',')[0]!.trim())
    .filter((rid) => rid && !rid.startsWith('~') && declared.includes(rid));
  return ordered.length > 0 ? ordered : declared;
}

/** The rtpParameters of the producer a sending section becomes (its ssrcs or rids, its cname). */
export function producerParameters(plan: SectionPlan): CreateProducerBody['rtpParameters'] {
  const m = plan.section.raw;
  const rtx = plan.codecs[1];
  const ssrcs = (m.ssrcs ?? []).map((s) => s.id).filter((id): id is number => typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= 0xffffffff);
  const cnameLine = (m.ssrcs ?? []).find((s) => s.attribute === 'cname');
  const cname = cnameLine && typeof cnameLine.value === 'string' && cnameLine.value.length <= 256 ? cnameLine.value : undefined;
  let encodings: { ssrc?: number; rid?: string; rtx?: { ssrc: number } }[];
  if (plan.rids.length > 0) {
    encodings = plan.rids.map((rid) => ({ rid }));
  } else {
    const fid = (m.ssrcGroups ?? []).find((g) => g.semantics === 'FID');
    const [media, repair] = fid ? fid.ssrcs.split(' ').map(Number) : [ssrcs[0], undefined];
    encodings = media !== undefined && Number.isInteger(media) ? [{ ssrc: media, ...(rtx && repair !== undefined && Number.isInteger(repair) ? { rtx: { ssrc: repair } } : {}) }] : [{}];
  }
  return {
    mid: plan.section.mid,
    codecs: plan.codecs.map((c) => ({
      mimeType: c.mimeType,
      payloadType: c.payloadType,
      clockRate: c.clockRate,
      ...(c.channels === undefined ? {} : { channels: c.channels }),
      parameters: c.parameters,
      rtcpFeedback: c.rtcpFeedback,
    })),
    headerExtensions: plan.headerExtensions.map((h) => ({ uri: h.uri, id: h.id })),
    encodings,
    rtcp: { ...(cname ? { cname } : {}), reducedSize: true },
  };
}

/** What the relay writes of its transport into an answer. */
export interface TransportSide {
  readonly iceParameters: ms.IceParameters;
  readonly iceCandidates: readonly ms.IceCandidate[];
  readonly dtlsParameters: ms.DtlsParameters;
}

/** What the answer says of one taken section: the codecs and extensions, and what the relay sends there (WHEP). */
export interface AnswerSection {
  readonly plan: SectionPlan;
  readonly direction: 'recvonly' | 'sendonly';
  /** WHEP: the ssrc (and RTX ssrc) and cname of the consumer sent in this section. */
  readonly send?: { ssrc: number; rtxSsrc?: number; cname: string; msid: string };
}

/** The relay's answer to an offer: ICE-lite, its candidates, its fingerprint; refused sections with port 0. */
export function writeAnswer(offer: Offer, side: TransportSide, taken: ReadonlyMap<number, AnswerSection>): string {
  const localRole = offer.remoteRole === 'client' ? 'passive' : 'active';
  const fingerprint = side.dtlsParameters.fingerprints.find((f) => f.algorithm === 'sha-256') ?? side.dtlsParameters.fingerprints[0]!;
  const bundle = offer.sections.filter((s) => taken.has(s.index)).map((s) => s.mid);
  const description: SessionDescription = {
    version: 0,
    origin: { username: '-', sessionId: randomInt(1, 2 ** 47), sessionVersion: 1, netType: 'IN', ipVer: 4, address: '127.0.0.1' },
    name: '-',
    timing: { start: 0, stop: 0 },
    icelite: 'ice-lite',
    fingerprint: { type: fingerprint.algorithm, hash: fingerprint.value },
    msidSemantic: { semantic: 'WMS', token: '*' },
    ...(bundle.length > 0 ? { groups: [{ type: 'BUNDLE', mids: bundle.join(' ') }] } : {}),
    media: offer.sections.map((section) => {
      const answer = taken.get(section.index);
      const proto = String(section.raw.protocol ?? 'UDP/TLS/RTP/SAVPF');
      if (!answer) {
        const firstPt = String(section.raw.payloads ?? '0').split(' ')[0] ?? '0';
        return { type: String(section.raw.type), port: 0, protocol: proto, payloads: firstPt, mid: section.mid, direction: 'inactive', rtp: [], fmtp: [] };
      }
      const { codecs, headerExtensions } = answer.plan;
      const media: MediaAttributes = {
        type: section.kind,
        port: 7,
        protocol: proto,
        payloads: codecs.map((c) => c.payloadType).join(' '),
        connection: { version: 4, ip: '127.0.0.1' },
        mid: section.mid,
        direction: answer.direction,
        iceUfrag: side.iceParameters.usernameFragment,
        icePwd: side.iceParameters.password,
        setup: localRole,
        rtcpMux: 'rtcp-mux',
        rtcpRsize: 'rtcp-rsize',
        candidates: side.iceCandidates.map((c) => ({
          foundation: c.foundation,
          component: 1,
          transport: c.protocol,
          priority: c.priority,
          ip: (c as unknown as { address?: string; ip?: string }).address ?? (c as unknown as { ip: string }).ip,
          port: c.port,
          type: c.type,
          ...(c.tcpType ? { tcptype: c.tcpType } : {}),
        })),
        endOfCandidates: 'end-of-candidates',
        rtp: codecs.map((c) => ({ payload: c.payloadType, codec: c.mimeType.split('/')[1]!, rate: c.clockRate, ...(c.channels === undefined ? {} : { encoding: c.channels }) })),
        fmtp: codecs.filter((c) => Object.keys(c.parameters).length > 0).map((c) => ({ payload: c.payloadType, config: Object.entries(c.parameters).map(([k, v]) => `${k}=${v}`).join(';') })),
        rtcpFb: codecs.flatMap((c) => c.rtcpFeedback.map((f) => ({ payload: c.payloadType, type: f.type, ...(f.parameter ? { subtype: f.parameter } : {}) }))),
        ext: headerExtensions.map((h) => ({ value: h.id, uri: h.uri })),
      };
      if (answer.plan.rids.length > 0 && answer.direction === 'recvonly') {
        media.rids = answer.plan.rids.map((rid) => ({ id: rid, direction: 'recv' }));
        media.simulcast = { dir1: 'recv', list1: answer.plan.rids.join(';') };
      }
      if (answer.send) {
        const { ssrc, rtxSsrc, cname, msid } = answer.send;
        media.msid = [{ id: msid, appdata: `${msid}-${section.kind}` }];
        media.ssrcs = [
          { id: ssrc, attribute: 'cname', value: cname },
          ...(rtxSsrc === undefined ? [] : [{ id: rtxSsrc, attribute: 'cname', value: cname }]),
        ];
        if (rtxSsrc !== undefined) media.ssrcGroups = [{ semantics: 'FID', ssrcs: `${ssrc} ${rtxSsrc}` }];
      }
      return media;
    }),
  };
  return sdpTransform.write(description);
}
