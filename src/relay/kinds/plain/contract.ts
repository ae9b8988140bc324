// Plain RTP transports: RTP in and out of a room without ICE or DTLS, for ffmpeg, GStreamer or an OBS
// bridge (ingest: produce on it) and for anything that takes a producer out (consume on it; the
// relay's own recordings do). The producer and consumer endpoints take a plain transport's id as
// `transportId`. Bounded like every other body: the ip is an IP literal, ports are ports, the SRTP
// key base64 of at most the longest suite's key and salt.
import { z } from 'zod';
import { appDataView } from '../../contract/common.js';
import { consumerReconcileSchema, producerStateSchema } from '../../contract/room-state.js';
import { appDataSchema } from '../../contract/bounds.js';
import { connectedSchema, id } from '../../contract/common.js';
import { capacityRow, errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { srtpParametersSchema } from '../pipes/contract.js';
import { relayRoute } from '../../contract/route.js';

const port = z.int().min(1).max(65535);

export const createPlainTransportBody = z.object({
  routerId: id,
  comedia: z
    .boolean()
    .optional()
    .describe('true: the transport learns where to send from the first RTP (and RTCP) packet it receives (an ingest sender behind NAT); no connect then. Default false'),
  rtcpMux: z.boolean().optional().describe('RTP and RTCP on one port; default true. false: RTCP on a port of its own (rtcpPort), as ffmpeg does by default'),
  enableSrtp: z.boolean().optional().describe('SRTP (AES_CM_128_HMAC_SHA1_80); default false'),
  appData: appDataSchema.optional(),
});

export const connectPlainTransportBody = z.object({
  ip: z
    .ipv4()
    .or(z.ipv6())
    .describe(
      "where the transport sends RTP (the receiver's address): a unicast address of the transport's listen family, not unspecified, multicast, broadcast/reserved, link-local or a cloud metadata address; otherwise VALIDATION_ERROR naming ip",
    ),
  port,
  rtcpPort: port.optional().describe('the RTCP port of the other side; only when the transport was created with rtcpMux false'),
  srtpParameters: srtpParametersSchema.optional().describe("the other side's srtpParameters; required when this transport has SRTP, refused when it has not"),
});

export type CreatePlainTransportBody = z.infer<typeof createPlainTransportBody>;
export type ConnectPlainTransportBody = z.infer<typeof connectPlainTransportBody>;

export const plainTransportSchema = z.object({
  id: z.string(),
  routerId: z.string(),
  ip: z.string().describe('where an RTP sender sends to (MEDIASOUP_PLAIN_ANNOUNCED_IP, else MEDIASOUP_PLAIN_LISTEN_IP)'),
  port: z.int().describe('the RTP port (and the RTCP one with rtcpMux)'),
  rtcpPort: z.int().optional().describe('the RTCP port; present when the transport was created with rtcpMux false'),
  comedia: z.boolean(),
  rtcpMux: z.boolean(),
  srtpParameters: srtpParametersSchema.optional().describe('present when SRTP is on: give it to the RTP peer'),
});

export const createPlainTransport = relayRoute({
  method: 'post',
  path: '/v1/plain-transports',
  summary:
    'Create a plain RTP transport on a router (listens on MEDIASOUP_PLAIN_LISTEN_IP): ingest from ffmpeg, GStreamer or OBS by producing on it, or take a producer out by consuming on it',
  body: createPlainTransportBody,
  success: { 201: { description: 'the plain transport: send RTP to ip/port (rtcpPort), or connect it to where it should send', schema: plainTransportSchema } },
  errors: [
    VALIDATION,
    notFoundRow('router'),
    capacityRow('plain_transports'),
    errorRow('MEDIASOUP_ERROR', 'no port left (RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers all in use); details {ports}'),
  ],
});

export const connectPlainTransport = relayRoute({
  method: 'post',
  path: '/v1/plain-transports/{id}/connect',
  summary: 'Tell a plain transport where to send RTP (once; not for a comedia transport, which learns it from what it receives)',
  body: connectPlainTransportBody,
  success: { 200: { description: 'connected', schema: connectedSchema } },
  errors: [
    errorRow(
      'VALIDATION_ERROR',
      'body fails its schema, ip is not a unicast address of the transport\'s family, rtcpPort given to an rtcpMux transport, or srtpParameters missing/extra; details.issues [{path, message}]',
    ),
    notFoundRow('plainTransport'),
    errorRow('CONFLICT', 'already connected or being connected, or a comedia transport; details {plainTransportId}'),
  ],
});

export const closePlainTransport = relayRoute({
  method: 'delete',
  path: '/v1/plain-transports/{id}',
  summary: 'Close a plain transport (its producers, their consumers and its own consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('plainTransport')],
});

/** One in a router's state (GET /v1/routers/{id}), with its producers and consumers. */
export const plainTransportStateSchema = z.object({
  id: z.string(),
  connected: z.boolean().describe('connect was called (and did not fail)'),
  comedia: z.boolean(),
  rtcpMux: z.boolean(),
  appData: appDataView,
  producers: z.array(producerStateSchema).describe('RTP received from an ingest sender'),
  consumers: z.array(consumerReconcileSchema).describe("this room's producers sent out as plain RTP (recordings among them)"),
});
