// Request bodies of the relay API. Checked before anything reaches a worker: a malformed
// dtlsParameters has crashed mediasoup workers in the past. Unknown members are stripped, not
// refused: signaling servers in production send some (`roomCode`, a numeric `userId`, `routerId` on
// consumers; test/media/compat.test.ts) and must keep working.
import { z } from 'zod';

const appData = z.record(z.string(), z.unknown());
const payloadType = z.number().int().min(0).max(127);

/** The spec's shallow rule: only `codecs` is checked; every other member reaches the engine untouched. */
const rtpCodecParameters = z.looseObject({
  mimeType: z.string().min(1),
  clockRate: z.number().int().positive(),
  payloadType,
});

export const rtpParametersSchema = z.looseObject({
  codecs: z.array(rtpCodecParameters).min(1),
});

/** Capabilities name the payload type `preferredPayloadType` (mediasoup, mediasoup-client): either name is accepted. */
const rtpCodecCapability = z
  .looseObject({
    mimeType: z.string().min(1),
    clockRate: z.number().int().positive(),
    payloadType: payloadType.optional(),
    preferredPayloadType: payloadType.optional(),
  })
  .refine((codec) => codec.payloadType !== undefined || codec.preferredPayloadType !== undefined, {
    path: ['payloadType'],
    message: 'payloadType or preferredPayloadType is required',
  });

export const rtpCapabilitiesSchema = z.looseObject({
  codecs: z.array(rtpCodecCapability).min(1),
});

/** A router's media codecs (RtpCodecCapability); the engine checks each against what it supports. */
const mediaCodec = z.looseObject({
  kind: z.enum(['audio', 'video']).optional(),
  mimeType: z.string().regex(/^(audio|video)\/.+$/i, 'must be audio/<codec> or video/<codec>'),
  clockRate: z.number().int().positive(),
  channels: z.number().int().positive().optional(),
  preferredPayloadType: payloadType.optional(),
  parameters: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
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
    value: z.string().regex(/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2})*$/, 'must be hex bytes separated by colons'),
  })
  .refine((f) => (f.value.length + 1) / 3 === FINGERPRINT_BYTES[f.algorithm], {
    path: ['value'],
    message: 'length does not match the algorithm',
  });

export const dtlsParametersSchema = z.object({
  role: z.enum(['auto', 'client', 'server']).optional(),
  fingerprints: z.array(fingerprint).min(1).max(8),
});

export const createRouterBody = z.object({
  mediaCodecs: z.array(mediaCodec).min(1).optional(),
  appData: appData.optional(),
});

export const createTransportBody = z.object({
  routerId: z.string().min(1),
  direction: z.enum(['send', 'recv']),
  enableSctp: z.boolean().optional(),
  appData: appData.optional(),
});

export const connectTransportBody = z.object({
  dtlsParameters: dtlsParametersSchema,
});

export const createProducerBody = z.object({
  transportId: z.string().min(1),
  kind: z.enum(['audio', 'video']),
  rtpParameters: rtpParametersSchema,
  paused: z.boolean().optional(),
  appData: appData.optional(),
});

export const createConsumerBody = z.object({
  transportId: z.string().min(1),
  producerId: z.string().min(1),
  rtpCapabilities: rtpCapabilitiesSchema,
  appData: appData.optional(),
});

export type CreateRouterBody = z.infer<typeof createRouterBody>;
export type CreateTransportBody = z.infer<typeof createTransportBody>;
export type DtlsParametersInput = z.infer<typeof dtlsParametersSchema>;
export type CreateProducerBody = z.infer<typeof createProducerBody>;
export type CreateConsumerBody = z.infer<typeof createConsumerBody>;
