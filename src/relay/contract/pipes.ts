// Request and answer shapes of the pipe-transport endpoints (cascading relays). Bounded like every
// other body: the ip is an IP literal, the SRTP key base64 of at most the longest suite's key and salt.
import { z } from 'zod';
import { appDataSchema, BOUNDS } from './bounds.js';
import { rtpParametersSchema } from './rtp.js';

const id = z.string().min(1).max(BOUNDS.id);

/** mediasoup's SrtpCryptoSuite values. */
export const SRTP_CRYPTO_SUITES = ['AEAD_AES_256_GCM', 'AEAD_AES_128_GCM', 'AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const;

/** AEAD_AES_256_GCM: a 32-byte key and a 12-byte salt, 44 bytes, 60 base64 characters; the others are shorter. */
const SRTP_KEY_BASE64_MAX = 60;

export const srtpParametersSchema = z.object({
  cryptoSuite: z.enum(SRTP_CRYPTO_SUITES),
  keyBase64: z
    .string()
    .min(4)
    .max(SRTP_KEY_BASE64_MAX)
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64'),
});

export const createPipeTransportBody = z.object({
  routerId: id,
  enableSrtp: z.boolean().optional().describe('SRTP between the relays; default true'),
  appData: appDataSchema.optional(),
});

export const connectPipeTransportBody = z.object({
  ip: z
    .ipv4()
    .or(z.ipv6())
    .describe(
      "the other relay's pipe transport ip, as its POST /pipe-transports answered: a unicast address of this pipe's listen family, not unspecified, multicast, broadcast/reserved (240.0.0.0/4), link-local or a cloud metadata address, and inside MEDIASOUP_PIPE_PEER_CIDRS when that is set; otherwise VALIDATION_ERROR naming ip",
    ),
  port: z.int().min(1).max(65535),
  srtpParameters: srtpParametersSchema.optional().describe("the other side's srtpParameters; required when this transport has SRTP, refused when it has not"),
});

export const createPipeConsumerBody = z.object({
  producerId: id,
});

export const createPipeProducerBody = z.object({
  producerId: z
    .string()
    .regex(BOUNDS.peerId, '1-64 characters of A-Z, a-z, 0-9, "-" and "_" (a producer id of another relay, a UUID)')
    .describe(
      "the producer's id on the relay it comes from: kept, so that ids agree across relays. 1-64 characters of A-Z, a-z, 0-9, \"-\" and \"_\" (mediasoup's ids are UUIDs); CONFLICT when any resource of this relay already has this id",
    ),
  kind: z.enum(['audio', 'video']),
  rtpParameters: rtpParametersSchema.describe('the rtpParameters of the pipe consumer on the other relay'),
  paused: z.boolean().optional(),
  appData: appDataSchema.optional(),
});

export const pipeTransportSchema = z.object({
  id: z.string(),
  routerId: z.string(),
  ip: z.string().describe('the address the other relay connects to (MEDIASOUP_PIPE_ANNOUNCED_IP, else the listen address)'),
  port: z.int(),
  srtpParameters: srtpParametersSchema.optional().describe('present when SRTP is on: give it to the other side in its connect'),
});

export const pipeConnectedSchema = z.object({ id: z.string(), connected: z.literal(true) });

export const pipeConsumerSchema = z.object({
  id: z.string(),
  producerId: z.string(),
  kind: z.enum(['audio', 'video']),
  rtpParameters: z.record(z.string(), z.unknown()).describe('give it, as it is, to POST /pipe-transports/{id}/producers on the other relay'),
  paused: z.boolean(),
  producerPaused: z.boolean(),
});

export const pipeProducerSchema = z.object({ id: z.string(), kind: z.enum(['audio', 'video']), paused: z.boolean() });

export type CreatePipeTransportBody = z.infer<typeof createPipeTransportBody>;
export type ConnectPipeTransportBody = z.infer<typeof connectPipeTransportBody>;
export type CreatePipeConsumerBody = z.infer<typeof createPipeConsumerBody>;
export type CreatePipeProducerBody = z.infer<typeof createPipeProducerBody>;
