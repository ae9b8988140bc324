/*
 * How a real WebRTC client talks to this relay (the relay never sees SDP; the client, or the
 * signaling server on its behalf, writes the relay's half of every SDP exchange from the JSON the
 * relay API returns, as mediasoup-client does in a browser):
 *
 * Send side (client -> relay):
 *   1. POST /internal/v1/transports {direction: "send"} gives iceParameters, iceCandidates, dtlsParameters.
 *   2. The client's peer connection creates the OFFER (one sendonly m-section per track).
 *   3. The ANSWER is written here from the transport: ICE-lite (mediasoup never gathers or checks;
 *      it answers the client's STUN checks), its ufrag/pwd and host candidates, its DTLS fingerprints
 *      and `a=setup:passive`, so mediasoup is the DTLS server and the client the DTLS client.
 *   4. POST …/transports/:id/connect with the client's fingerprint from the offer and role "client".
 *   5. POST /internal/v1/producers with rtpParameters derived from the offer: the codec the client
 *      will send, its payload type, the m-section's mid and the SSRC it announced.
 *
 * Receive side (relay -> client):
 *   1. POST /internal/v1/consumers on a "recv" transport with the client's rtpCapabilities gives
 *      consumer.rtpParameters (payload types, SSRC, cname, mid), created paused.
 *   2. The OFFER is written here from those rtpParameters (one sendonly m-section per consumer) and
 *      the transport's ICE/DTLS parameters (`a=setup:actpass`); the client's peer ANSWERS.
 *   3. POST …/transports/:id/connect with the fingerprint and DTLS role taken from that answer.
 *   4. POST …/consumers/:id/resume: only now does media flow to the client.
 *
 * Only UDP candidates are written: the werift peer used in the tests does not do ICE over TCP.
 */

// Structural copies of the relay's JSON shapes (mediasoup's own), loose enough to accept them as returned;
// type aliases rather than interfaces so that they fit the API's open (`looseObject`) request bodies.
export type IceParameters = {
  usernameFragment: string;
  password: string;
  iceLite?: boolean;
};
export type IceCandidate = {
  foundation: string;
  priority: number;
  ip: string;
  protocol: string;
  port: number;
  type: string;
  tcpType?: string;
};
export type DtlsFingerprint = {
  algorithm: string;
  value: string;
};
export type DtlsParameters = {
  role?: 'auto' | 'client' | 'server';
  fingerprints: DtlsFingerprint[];
};
export const FINGERPRINT_ALGORITHMS = ['sha-1', 'sha-224', 'sha-256', 'sha-384', 'sha-512'] as const;
export type FingerprintAlgorithm = (typeof FINGERPRINT_ALGORITHMS)[number];
/** A peer's DTLS parameters as `connect` takes them: a definite role and known hash functions. */
export type PeerDtlsParameters = {
  role: 'client' | 'server';
  fingerprints: { algorithm: FingerprintAlgorithm; value: string }[];
};
export type TransportDescription = {
  iceParameters: IceParameters;
  iceCandidates: IceCandidate[];
  dtlsParameters: DtlsParameters;
};
export type RtcpFeedback = {
  type: string;
  parameter?: string;
};
export type RtpCodecParameters = {
  mimeType: string;
  payloadType: number;
  clockRate: number;
  channels?: number;
  parameters?: Record<string, string | number>;
  rtcpFeedback?: RtcpFeedback[];
};
export type RtpHeaderExtensionParameters = {
  uri: string;
  id: number;
};
export type RtpEncodingParameters = {
  ssrc?: number;
  rtx?: { ssrc: number };
};
export type RtpParameters = {
  mid?: string;
  codecs: RtpCodecParameters[];
  headerExtensions?: RtpHeaderExtensionParameters[];
  encodings?: RtpEncodingParameters[];
  rtcp?: { cname?: string; reducedSize?: boolean; mux?: boolean };
};
export type RtpCapabilityCodec = {
  kind?: MediaKind;
  mimeType: string;
  clockRate: number;
  channels?: number;
  preferredPayloadType?: number;
  parameters?: Record<string, string | number>;
  rtcpFeedback?: RtcpFeedback[];
};
export type RtpCapabilities = {
  codecs?: RtpCapabilityCodec[];
  headerExtensions?: unknown[];
};
/**
 * What the relay answers, read as it is typed against either mediasoup (its JSON may carry any value
 * in codec parameters): the functions below that only read it take this, and keep what they write bounded.
 */
type Loose<T extends { parameters?: unknown }> = Omit<T, 'parameters'> & { parameters?: Record<string, unknown> };
export type AnswerRtpCapabilities = { codecs?: Loose<RtpCapabilityCodec>[]; headerExtensions?: unknown[] };

/** Codec parameters as the relay's bounds take them: string or number values only. */
function boundedParameters(parameters: Record<string, unknown> | undefined): Record<string, string | number> {
  return Object.fromEntries(Object.entries(parameters ?? {}).filter((e): e is [string, string | number] => typeof e[1] === 'string' || typeof e[1] === 'number'));
}

export type MediaKind = 'audio' | 'video';

/** One m-section of an SDP, reduced to what the relay needs. */
export interface SdpMediaSection {
  kind: MediaKind;
  mid: string;
  direction: string | undefined;
  codecs: RtpCodecParameters[];
  headerExtensions: RtpHeaderExtensionParameters[];
  ssrcs: number[];
  cname: string | undefined;
  fingerprints: DtlsFingerprint[];
  setup: string | undefined;
}
export interface ParsedSdp {
  fingerprints: DtlsFingerprint[];
  setup: string | undefined;
  media: SdpMediaSection[];
}

export const MID_EXTENSION_URI = 'urn:ietf:params:rtp-hdrext:sdes:mid';

/** Reads the parts of an SDP this relay cares about: codecs, mids, SSRCs, DTLS fingerprint and role. */
export function parseSdp(sdp: string): ParsedSdp {
  const session: ParsedSdp = { fingerprints: [], setup: undefined, media: [] };
  let current: SdpMediaSection | undefined;
  const byPt = new Map<number, RtpCodecParameters>();

  for (const raw of sdp.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('m=')) {
      const kind = line.slice(2).split(' ')[0];
      if (kind !== 'audio' && kind !== 'video') {
        current = undefined;
        continue;
      }
      current = { kind, mid: '', direction: undefined, codecs: [], headerExtensions: [], ssrcs: [], cname: undefined, fingerprints: [], setup: undefined };
      byPt.clear();
      session.media.push(current);
      continue;
    }
    if (!line.startsWith('a=')) continue;
    const [attr, value = ''] = splitOnce(line.slice(2), ':');
    if (attr === 'fingerprint') {
      const [algorithm, fp] = splitOnce(value, ' ');
      (current ?? session).fingerprints.push({ algorithm: algorithm.toLowerCase(), value: fp ?? '' });
      continue;
    }
    if (attr === 'setup') {
      (current ?? session).setup = value;
      continue;
    }
    if (!current) continue;
    switch (attr) {
      case 'mid':
        current.mid = value;
        break;
      case 'sendonly':
      case 'recvonly':
      case 'sendrecv':
      case 'inactive':
        current.direction = attr;
        break;
      case 'rtpmap': {
        const m = /^(\d+) ([^/]+)\/(\d+)(?:\/(\d+))?$/.exec(value);
        if (!m) break;
        const codec: RtpCodecParameters = {
          mimeType: `${current.kind}/${m[2]}`,
          payloadType: Number(m[1]),
          clockRate: Number(m[3]),
          parameters: {},
          rtcpFeedback: [],
        };
        if (m[4]) codec.channels = Number(m[4]);
        byPt.set(codec.payloadType, codec);
        current.codecs.push(codec);
        break;
      }
      case 'fmtp': {
        const [pt, params = ''] = splitOnce(value, ' ');
        const codec = byPt.get(Number(pt));
        if (codec) codec.parameters = parseFmtp(params);
        break;
      }
      case 'rtcp-fb': {
        const [pt, fb = ''] = splitOnce(value, ' ');
        const [type, parameter] = splitOnce(fb, ' ');
        const entry: RtcpFeedback = parameter ? { type, parameter } : { type };
        const targets = pt === '*' ? current.codecs : [byPt.get(Number(pt))];
        for (const codec of targets) codec?.rtcpFeedback?.push(entry);
        break;
      }
      case 'extmap': {
        const m = /^(\d+)(?:\/\w+)? (\S+)/.exec(value);
        if (m) current.headerExtensions.push({ id: Number(m[1]), uri: m[2]! });
        break;
      }
      case 'ssrc': {
        const [ssrc, rest = ''] = splitOnce(value, ' ');
        const n = Number(ssrc);
        if (!current.ssrcs.includes(n)) current.ssrcs.push(n);
        if (rest.startsWith('cname:')) current.cname = rest.slice('cname:'.length);
        break;
      }
    }
  }
  return session;
}

/** The DTLS fingerprints and role a peer announced in its SDP, as `connect` takes them. */
export function dtlsParametersFromSdp(sdp: string): PeerDtlsParameters {
  const parsed = parseSdp(sdp);
  const first = parsed.media[0];
  const announced = parsed.fingerprints.length ? parsed.fingerprints : (first?.fingerprints ?? []);
  const setup = parsed.setup ?? first?.setup;
  const fingerprints = announced.filter((f): f is PeerDtlsParameters['fingerprints'][number] =>
    (FINGERPRINT_ALGORITHMS as readonly string[]).includes(f.algorithm),
  );
  if (!fingerprints.length) throw new Error('SDP carries no a=fingerprint with a known hash function');
  // The peer's setup decides its DTLS role: active (or actpass, when it offers to a passive relay) = client.
  const role = setup === 'passive' ? 'server' : 'client';
  return { role, fingerprints };
}

/**
 * rtpParameters for POST /producers, derived from the peer's offer for one m-section: the one codec of
 * that kind the peer will send (RTX, RED, FEC left out), the mid and its header extension, the SSRC.
 */
export function producerRtpParametersFromOffer(offer: ParsedSdp, mid: string, mimeType: string): RtpParameters {
  const media = offer.media.find((m) => m.mid === mid);
  if (!media) throw new Error(`offer has no m-section with mid ${mid}`);
  const codec = media.codecs.find((c) => c.mimeType.toLowerCase() === mimeType.toLowerCase());
  if (!codec) throw new Error(`offer's m-section ${mid} does not carry ${mimeType}`);
  const ssrc = media.ssrcs[0];
  if (ssrc === undefined) throw new Error(`offer's m-section ${mid} announces no SSRC`);
  const midExtension = media.headerExtensions.find((e) => e.uri === MID_EXTENSION_URI);
  return {
    mid,
    codecs: [codec],
    headerExtensions: midExtension ? [midExtension] : [],
    encodings: [{ ssrc }],
    rtcp: { cname: media.cname ?? `peer-${ssrc}`, reducedSize: true },
  };
}

/**
 * The relay's answer to a send-side offer: for every m-section of the offer, accept only `accept`
 * codecs (by mime type) and the mid header extension, as the receiving end (recvonly).
 */
export function writeSendAnswer(offer: ParsedSdp, transport: TransportDescription, accept: string[]): string {
  const acceptLower = accept.map((m) => m.toLowerCase());
  const mids = offer.media.map((m) => m.mid);
  const lines = sessionHeader(transport, mids);
  for (const media of offer.media) {
    const codecs = media.codecs.filter((c) => acceptLower.includes(c.mimeType.toLowerCase()));
    if (!codecs.length) throw new Error(`the relay accepts none of the codecs offered in m-section ${media.mid}`);
    lines.push(...mediaHeader(media.kind, media.mid, codecs, transport, 'passive', 'recvonly'));
    lines.push(...codecLines(codecs));
    for (const ext of media.headerExtensions.filter((e) => e.uri === MID_EXTENSION_URI)) lines.push(`a=extmap:${ext.id} ${ext.uri}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

export type ConsumerDescription = {
  id: string;
  kind: MediaKind;
  rtpParameters: Omit<RtpParameters, 'codecs'> & { codecs: Loose<RtpCodecParameters>[] };
};

/**
 * The relay's offer for a receive transport: one sendonly m-section per consumer, written from
 * consumer.rtpParameters (its mid, payload types, SSRC and cname). The peer answers it.
 */
export function writeRecvOffer(transport: TransportDescription, consumers: ConsumerDescription[]): string {
  const mids = consumers.map((c) => consumerMid(c));
  const lines = sessionHeader(transport, mids);
  for (const consumer of consumers) {
    const { rtpParameters } = consumer;
    const mid = consumerMid(consumer);
    const codecs = rtpParameters.codecs.map((c) => ({ ...c, parameters: boundedParameters(c.parameters) }));
    lines.push(...mediaHeader(consumer.kind, mid, codecs, transport, 'actpass', 'sendonly'));
    lines.push(...codecLines(codecs));
    for (const ext of rtpParameters.headerExtensions ?? []) lines.push(`a=extmap:${ext.id} ${ext.uri}`);
    const encoding = rtpParameters.encodings?.[0];
    if (encoding?.ssrc === undefined) throw new Error(`consumer ${consumer.id} has no SSRC`);
    const cname = rtpParameters.rtcp?.cname ?? 'relay';
    const streamId = `relay-${consumer.id}`;
    lines.push(`a=msid:${streamId} ${consumer.id}`);
    if (encoding.rtx) lines.push(`a=ssrc-group:FID ${encoding.ssrc} ${encoding.rtx.ssrc}`);
    for (const ssrc of [encoding.ssrc, encoding.rtx?.ssrc].filter((s): s is number => s !== undefined)) {
      lines.push(`a=ssrc:${ssrc} cname:${cname}`, `a=ssrc:${ssrc} msid:${streamId} ${consumer.id}`);
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

export function consumerMid(consumer: ConsumerDescription): string {
  if (!consumer.rtpParameters.mid) throw new Error(`consumer ${consumer.id} has no mid in its rtpParameters`);
  return consumer.rtpParameters.mid;
}

/**
 * rtpCapabilities for POST /consumers from a peer that decodes only `accept` (by mime type): the
 * router's codecs of those types with NACK and PLI feedback and no RTX or header extensions, which
 * is what the werift peer of the tests handles.
 */
export function receiverRtpCapabilities(routerCapabilities: AnswerRtpCapabilities, accept: string[]): { codecs: RtpCapabilityCodec[]; headerExtensions: [] } {
  const acceptLower = accept.map((m) => m.toLowerCase());
  const codecs = (routerCapabilities.codecs ?? [])
    .filter((c) => acceptLower.includes(c.mimeType.toLowerCase()))
    .map((c) => ({
      ...c,
      parameters: boundedParameters(c.parameters),
      rtcpFeedback: (c.rtcpFeedback ?? []).filter((fb) => fb.type === 'nack' && (fb.parameter === undefined || fb.parameter === '' || fb.parameter === 'pli')),
    }));
  if (codecs.length !== accept.length) throw new Error(`router lacks some of ${accept.join(', ')}`);
  return { codecs, headerExtensions: [] };
}

function sessionHeader(transport: TransportDescription, mids: string[]): string[] {
  const lines = [
    'v=0',
    `o=mediasoup ${Date.now()} 1 IN IP4 0.0.0.0`,
    's=-',
    't=0 0',
    'a=ice-lite',
    `a=group:BUNDLE ${mids.join(' ')}`,
    'a=msid-semantic: WMS *',
  ];
  for (const fp of transport.dtlsParameters.fingerprints) lines.push(`a=fingerprint:${fp.algorithm} ${fp.value}`);
  return lines;
}

function mediaHeader(
  kind: MediaKind,
  mid: string,
  codecs: RtpCodecParameters[],
  transport: TransportDescription,
  setup: 'passive' | 'actpass',
  direction: 'sendonly' | 'recvonly',
): string[] {
  const lines = [
    `m=${kind} 7 UDP/TLS/RTP/SAVPF ${codecs.map((c) => c.payloadType).join(' ')}`,
    'c=IN IP4 127.0.0.1',
    `a=mid:${mid}`,
    `a=${direction}`,
    `a=ice-ufrag:${transport.iceParameters.usernameFragment}`,
    `a=ice-pwd:${transport.iceParameters.password}`,
  ];
  for (const c of transport.iceCandidates.filter((c) => c.protocol === 'udp')) {
    lines.push(`a=candidate:${c.foundation} 1 udp ${c.priority} ${c.ip} ${c.port} typ ${c.type}`);
  }
  lines.push('a=end-of-candidates', `a=setup:${setup}`, 'a=rtcp-mux', 'a=rtcp-rsize');
  return lines;
}

function codecLines(codecs: RtpCodecParameters[]): string[] {
  const lines: string[] = [];
  for (const codec of codecs) {
    const name = codec.mimeType.split('/')[1];
    lines.push(`a=rtpmap:${codec.payloadType} ${name}/${codec.clockRate}${codec.channels && codec.channels > 1 ? `/${codec.channels}` : ''}`);
    const params = Object.entries(codec.parameters ?? {});
    if (params.length) lines.push(`a=fmtp:${codec.payloadType} ${params.map(([k, v]) => `${k}=${String(v)}`).join(';')}`);
    for (const fb of codec.rtcpFeedback ?? []) lines.push(`a=rtcp-fb:${codec.payloadType} ${fb.type}${fb.parameter ? ` ${fb.parameter}` : ''}`);
  }
  return lines;
}

function parseFmtp(params: string): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const pair of params.split(';')) {
    const [k, v = ''] = splitOnce(pair.trim(), '=');
    if (!k) continue;
    // mediasoup compares numeric fmtp values as numbers (e.g. packetization-mode, apt).
    out[k] = /^\d+$/.test(v) ? Number(v) : v;
  }
  return out;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + sep.length)];
}
