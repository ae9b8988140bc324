// The media parameters the relay's bodies carry (RTP parameters and capabilities, codecs, DTLS) and
// the engine's objects its answers carry. Checked before anything reaches a worker: a malformed
// dtlsParameters, a long scalabilityMode or a long mimeType has crashed or stalled mediasoup.
// Every member that goes to the engine is listed with its bound (bounds.ts says where each comes
// from); members not listed are dropped (z.object strips them), so nothing unbounded reaches the
// engine, and extra fields a signaling server sends stay harmless.
import { z } from 'zod';
import { BOUNDS } from './bounds.js';
import { int, mediaKind as kind } from './common.js';

const payloadType = int({ min: 0, max: 127 });
const ssrc = int(BOUNDS.ssrc);

/** RFC 6838 restricted-name after `audio/` or `video/`: what mediasoup's `^(audio|video)/(.+)` needs, bounded. */
const mimeType = z
  .string()
  .max(6 + BOUNDS.mimeSubtype)
  // Case-insensitive like mediasoup's, spelt out so that the OpenAPI pattern (which has no flags) says the same.
  .regex(/^([Aa][Uu][Dd][Ii][Oo]|[Vv][Ii][Dd][Ee][Oo])\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/, `must be audio/<codec> or video/<codec> (at most ${BOUNDS.mimeSubtype} characters)`);

const clockRate = int(BOUNDS.clockRate);
const channels = int(BOUNDS.channels);

/** fmtp parameters: short keys, short strings or int32-range numbers (what the worker can keep). */
const codecParameters = z
  .record(
    z.string().max(BOUNDS.parameterKey),
    z.union([z.string().max(BOUNDS.parameterValue), z.number().min(BOUNDS.parameterNumber.min).max(BOUNDS.parameterNumber.max)]),
  )
  .refine((parameters) => Object.keys(parameters).length <= BOUNDS.codecParameters, { message: `at most ${BOUNDS.codecParameters} parameters` })
  .meta({ description: `At most ${BOUNDS.codecParameters} parameters.` });

const rtcpFeedback = z
  .array(
    z.object({
      type: z.string().min(1).max(BOUNDS.rtcpFeedbackToken),
      parameter: z.string().max(BOUNDS.rtcpFeedbackToken).optional(),
    }),
  )
  .max(BOUNDS.rtcpFeedback);

/** The spec's rule (mimeType, clockRate and payloadType required), and every other member bounded. */
const rtpCodecParameters = z.object({
  mimeType,
  clockRate,
  payloadType,
  channels: channels.optional(),
  parameters: codecParameters.optional(),
  rtcpFeedback: rtcpFeedback.optional(),
});

const headerExtensionId = int(BOUNDS.headerExtensionId);
const uri = z.string().min(1).max(BOUNDS.uri);

const rtpHeaderExtensionParameters = z.object({
  uri,
  id: headerExtensionId,
  encrypt: z.boolean().optional(),
  parameters: codecParameters.optional(),
});

/** What mediasoup-client's handlers (Chrome111, Firefox120, Safari12) put into an encoding. */
const rtpEncodingParameters = z.object({
  ssrc: ssrc.optional(),
  rid: z.string().regex(BOUNDS.rid, 'must be 1-16 letters, digits, "-" or "_" (RFC 8851)').optional(),
  codecPayloadType: payloadType.optional(),
  rtx: z.object({ ssrc }).optional(),
  dtx: z.boolean().optional(),
  scalabilityMode: z
    .string()
    .max('L5T4_KEY_SHIFT'.length)
    .regex(BOUNDS.scalabilityMode, 'must be a W3C scalability mode: L or S, 1-5 spatial layers, T, 1-4 temporal layers, then h, _KEY or _KEY_SHIFT (e.g. L1T3, L3T3_KEY)')
    .optional(),
  scaleResolutionDownBy: z.number().min(BOUNDS.scaleResolutionDownBy.min).max(BOUNDS.scaleResolutionDownBy.max).optional(),
  maxBitrate: z.number().min(BOUNDS.bitrate.min).max(BOUNDS.bitrate.max).optional(),
  maxFramerate: z.number().min(BOUNDS.framerate.min).max(BOUNDS.framerate.max).optional(),
  adaptivePtime: z.boolean().optional(),
  active: z.boolean().optional(),
  priority: z.enum(['very-low', 'low', 'medium', 'high']).optional(),
  networkPriority: z.enum(['very-low', 'low', 'medium', 'high']).optional(),
});

const rtcpParameters = z.object({
  cname: z.string().max(BOUNDS.cname).optional(),
  reducedSize: z.boolean().optional(),
  mux: z.boolean().optional(),
});

export const rtpParametersSchema = z.object({
  mid: z.string().min(1).max(BOUNDS.mid).optional(),
  codecs: z.array(rtpCodecParameters).min(1).max(BOUNDS.codecs),
  headerExtensions: z.array(rtpHeaderExtensionParameters).max(BOUNDS.headerExtensions).optional(),
  encodings: z.array(rtpEncodingParameters).max(BOUNDS.encodings).optional(),
  rtcp: rtcpParameters.optional(),
  msid: z.string().min(1).max(BOUNDS.msid).optional(),
});

/** Capabilities name the payload type `preferredPayloadType` (mediasoup, mediasoup-client): either name is accepted. */
const rtpCodecCapability = z
  .object({
    kind: kind.optional(),
    mimeType,
    clockRate,
    payloadType: payloadType.optional(),
    preferredPayloadType: payloadType.optional(),
    channels: channels.optional(),
    parameters: codecParameters.optional(),
    rtcpFeedback: rtcpFeedback.optional(),
  })
  .refine((codec) => codec.payloadType !== undefined || codec.preferredPayloadType !== undefined, {
    path: ['payloadType'],
    message: 'payloadType or preferredPayloadType is required',
  });

const rtpHeaderExtensionCapability = z.object({
  kind: kind.optional(),
  uri,
  preferredId: headerExtensionId,
  preferredEncrypt: z.boolean().optional(),
  direction: z.enum(['sendrecv', 'sendonly', 'recvonly', 'inactive']).optional(),
});

export const rtpCapabilitiesSchema = z.object({
  codecs: z.array(rtpCodecCapability).min(1).max(BOUNDS.capabilityCodecs),
  headerExtensions: z.array(rtpHeaderExtensionCapability).max(BOUNDS.capabilityHeaderExtensions).optional(),
});

/** A router's media codecs (RtpCodecCapability); the engine checks each against what it supports. */
const mediaCodec = z.object({
  kind: kind.optional(),
  mimeType,
  clockRate,
  channels: channels.optional(),
  preferredPayloadType: payloadType.optional(),
  parameters: codecParameters.optional(),
  rtcpFeedback: rtcpFeedback.optional(),
});

/** The hash functions mediasoup accepts for a DTLS fingerprint, with the digest length of each. */
export const FINGERPRINT_BYTES = {
  'sha-1': 20,
  'sha-224': 28,
  'sha-256': 32,
  'sha-384': 48,
  'sha-512': 64,
} as const;
type FingerprintAlgorithm = keyof typeof FINGERPRINT_BYTES;

const fingerprint = z
  .object({
    algorithm: z.enum(Object.keys(FINGERPRINT_BYTES) as [FingerprintAlgorithm, ...FingerprintAlgorithm[]]),
    // sha-512: 64 hex pairs and 63 colons.
    value: z
      .string()
      .max(FINGERPRINT_BYTES['sha-512'] * 3 - 1)
      .regex(/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2})*$/, 'must be hex bytes separated by colons'),
  })
  .refine((f) => (f.value.length + 1) / 3 === FINGERPRINT_BYTES[f.algorithm], {
    path: ['value'],
    message: 'length does not match the algorithm',
  });

export const dtlsParametersSchema = z.object({
  role: z.enum(['auto', 'client', 'server']).optional(),
  fingerprints: z.array(fingerprint).min(1).max(BOUNDS.fingerprints),
});

/** Payload types a router with these codecs needs: one per codec, one more per video codec (RTX). */
const payloadTypesNeeded = (codecs: { mimeType: string }[]) => codecs.reduce((n, c) => n + (/^video\//i.test(c.mimeType) ? 2 : 1), 0);

export const mediaCodecsSchema = z
  .array(mediaCodec)
  .min(1)
  .max(BOUNDS.mediaCodecPayloadTypes)
  .refine((codecs) => payloadTypesNeeded(codecs) <= BOUNDS.mediaCodecPayloadTypes, {
    message: `needs more than the ${BOUNDS.mediaCodecPayloadTypes} dynamic payload types mediasoup has (one per audio codec, two per video codec with its RTX)`,
  })
  .meta({ description: `Audio codecs count 1, video codecs 2 (with their RTX): at most ${BOUNDS.mediaCodecPayloadTypes} in all.` });

// The engine's objects as the answers carry them (mediasoup's shapes, named here so that no client
// type depends on the engine): the members a signaling server reads. The engine may add others (a
// newer mediasoup does): the document says so, the types list what the relay promises.
const engineObject = <S extends z.ZodRawShape>(shape: S) => z.object(shape).meta({ additionalProperties: {} });

export const iceParametersView = engineObject({ usernameFragment: z.string(), password: z.string(), iceLite: z.boolean().optional() });

export const dtlsParametersView = engineObject({
  role: z.enum(['auto', 'client', 'server']).optional(),
  fingerprints: z.array(engineObject({ algorithm: z.string(), value: z.string() })),
});

export const sctpParametersView = engineObject({ port: z.int(), OS: z.int(), MIS: z.int(), maxMessageSize: z.int() });

const rtcpFeedbackView = z.array(engineObject({ type: z.string(), parameter: z.string().optional() }));
const codecParametersView = z.record(z.string(), z.unknown());

export const rtpCapabilitiesView = engineObject({
  codecs: z
    .array(
      engineObject({
        kind: kind,
        mimeType: z.string(),
        preferredPayloadType: z.int().optional(),
        clockRate: z.int(),
        channels: z.int().optional(),
        parameters: codecParametersView.optional(),
        rtcpFeedback: rtcpFeedbackView.optional(),
      }),
    )
    .optional(),
  headerExtensions: z
    .array(
      engineObject({
        kind: kind,
        uri: z.string(),
        preferredId: z.int(),
        preferredEncrypt: z.boolean().optional(),
        direction: z.enum(['sendrecv', 'sendonly', 'recvonly', 'inactive']).optional(),
      }),
    )
    .optional(),
});

export const rtpParametersView = engineObject({
  mid: z.string().optional(),
  codecs: z.array(
    engineObject({
      mimeType: z.string(),
      payloadType: z.int(),
      clockRate: z.int(),
      channels: z.int().optional(),
      parameters: codecParametersView.optional(),
      rtcpFeedback: rtcpFeedbackView.optional(),
    }),
  ),
  headerExtensions: z.array(engineObject({ uri: z.string(), id: z.int(), encrypt: z.boolean().optional(), parameters: codecParametersView.optional() })).optional(),
  encodings: z.array(engineObject({ ssrc: z.int().optional(), rid: z.string().optional(), rtx: engineObject({ ssrc: z.int() }).optional() })).optional(),
  rtcp: engineObject({ cname: z.string().optional(), reducedSize: z.boolean().optional(), mux: z.boolean().optional() }).optional(),
  msid: z.string().optional(),
});

export type DtlsParametersInput = z.infer<typeof dtlsParametersSchema>;
