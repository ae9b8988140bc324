// Pipe transports between relays (cascading): create, connect, send a producer through (a pipe
// consumer), receive one (a pipe producer), close. Bounded like every other body: the ip is an IP
// literal, the SRTP key base64 of at most the longest suite's key and salt.
import { z } from 'zod';
import { appDataView } from '../../contract/common.js';
import { consumerReconcileSchema, producerStateSchema } from '../../contract/room-state.js';
import { appDataSchema, BOUNDS } from '../../contract/bounds.js';
import { connectedSchema, id, mediaKind } from '../../contract/common.js';
import { capacityRow, errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { rtpParametersSchema, rtpParametersView } from '../../contract/rtp.js';

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
  kind: mediaKind,
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

export const pipeConsumerSchema = z.object({
  id: z.string(),
  producerId: z.string(),
  kind: mediaKind,
  rtpParameters: rtpParametersView.describe('give it, as it is, to POST /pipe-transports/{id}/producers on the other relay'),
  paused: z.boolean(),
  producerPaused: z.boolean(),
});

export const pipeProducerSchema = z.object({ id: z.string(), kind: mediaKind, paused: z.boolean() });

export type CreatePipeTransportBody = z.infer<typeof createPipeTransportBody>;
export type ConnectPipeTransportBody = z.infer<typeof connectPipeTransportBody>;
export type CreatePipeConsumerBody = z.infer<typeof createPipeConsumerBody>;
export type CreatePipeProducerBody = z.infer<typeof createPipeProducerBody>;

export const createPipeTransport = relayRoute({
  method: 'post',
  path: '/v1/pipe-transports',
  summary: 'Create a pipe transport on a router, to carry media to or from the same room on another relay (SRTP by default; listens on MEDIASOUP_PIPE_LISTEN_IP)',
  body: createPipeTransportBody,
  success: { 201: { description: 'the pipe transport: give ip, port and srtpParameters to the other side', schema: pipeTransportSchema } },
  errors: [
    VALIDATION,
    notFoundRow('router'),
    errorRow('CONFLICT', 'pipe transports are not enabled on this relay (MEDIASOUP_PIPE_LISTEN_IP unset); details {setting}'),
    capacityRow('pipe_transports'),
    errorRow('MEDIASOUP_ERROR', 'no port left for pipe transports (RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers all in use); details {pipeTransports, ports}'),
  ],
});

export const connectPipeTransport = relayRoute({
  method: 'post',
  path: '/v1/pipe-transports/{id}/connect',
  summary: "Connect a pipe transport to the other relay's (once)",
  body: connectPipeTransportBody,
  success: { 200: { description: 'connected', schema: connectedSchema } },
  errors: [
    errorRow(
      'VALIDATION_ERROR',
      'body fails its schema, or ip is not a unicast address of the pipe\'s family (unspecified, multicast, broadcast/reserved, link-local, cloud metadata, IPv4-mapped) or outside MEDIASOUP_PIPE_PEER_CIDRS; details.issues [{path: "ip", message}]',
    ),
    notFoundRow('pipeTransport'),
    errorRow('CONFLICT', 'already connected or being connected; details {pipeTransportId}'),
  ],
});

export const createPipeConsumer = relayRoute({
  method: 'post',
  path: '/v1/pipe-transports/{id}/consumers',
  summary: 'Send a producer of this relay through the pipe transport (a pipe consumer; closes with the producer)',
  body: createPipeConsumerBody,
  success: { 201: { description: 'the pipe consumer: give producerId, kind and rtpParameters to the other side', schema: pipeConsumerSchema } },
  errors: [
    VALIDATION,
    notFoundRow('pipeTransport or producer'),
    errorRow('CAN_NOT_CONSUME', 'the producer belongs to another router; details {producerId, routerId, reason}'),
    capacityRow('consumers'),
  ],
});

export const createPipeProducer = relayRoute({
  method: 'post',
  path: '/v1/pipe-transports/{id}/producers',
  summary: "Receive another relay's producer through the pipe transport, under its own id: an ordinary producer of the room from then on",
  body: createPipeProducerBody,
  success: { 201: { description: 'the producer', schema: pipeProducerSchema } },
  errors: [
    VALIDATION,
    notFoundRow('pipeTransport'),
    errorRow(
      'CONFLICT',
      'a resource of any kind (router, transport, pipe transport, producer, consumer, data producer or consumer, or one the engine holds) already has this id on this relay, a producer with it is being created, or an ssrc clash; details {producerId, resource, routerId?, transportId?} or {reason}',
    ),
    capacityRow('producers'),
  ],
});

export const closePipeTransport = relayRoute({
  method: 'delete',
  path: '/v1/pipe-transports/{id}',
  summary: 'Close a pipe transport (its pipe consumers, its pipe producers and their consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('pipeTransport')],
});

/** One in a router's state (GET /v1/routers/{id}), with its producers and consumers. */
export const pipeTransportStateSchema = z.object({
  id: z.string(),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  appData: appDataView,
  producers: z.array(producerStateSchema).describe("producers received from another relay (their ids are the other relay's)"),
  consumers: z.array(consumerReconcileSchema).describe("this room's producers sent to another relay"),
});
