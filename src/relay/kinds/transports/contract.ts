// WebRTC transports of a router: create (through the worker's WebRtcServer), connect, close.
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { connectedSchema, id } from '../../contract/common.js';
import { iceServerSchema } from '../../contract/ice-servers.js';
import { capacityRow, errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { dtlsParametersSchema, dtlsParametersView, iceParametersView, sctpParametersView } from '../../contract/rtp.js';

export const createTransportBody = z.object({
  routerId: id,
  direction: z.enum(['send', 'recv']),
  enableSctp: z.boolean().optional(),
  appData: appDataSchema.optional(),
});

export const connectTransportBody = z.object({
  dtlsParameters: dtlsParametersSchema,
});

export type CreateTransportBody = z.infer<typeof createTransportBody>;

export const iceCandidateSchema = z.object({
  foundation: z.string(),
  priority: z.number(),
  address: z.string(),
  ip: z.string().describe('the same as address (mediasoup 3.11 name)'),
  protocol: z.enum(['udp', 'tcp']),
  port: z.int(),
  type: z.string(),
  tcpType: z.string().optional(),
});

export const transportSchema = z.object({
  id: z.string(),
  routerId: z.string(),
  direction: z.enum(['send', 'recv']),
  iceParameters: iceParametersView,
  iceCandidates: z.array(iceCandidateSchema),
  dtlsParameters: dtlsParametersView,
  sctpParameters: sctpParametersView.optional(),
  iceServers: z
    .array(iceServerSchema)
    .optional()
    .describe("only when TURN is configured: the TURN servers with a credential for appData.userId (else the transport's id), for mediasoup-client's transport option of that name"),
});

export const createTransport = relayRoute({
  method: 'post',
  path: '/v1/transports',
  summary: "Create a WebRTC transport on a router (through its worker's WebRtcServer)",
  body: createTransportBody,
  success: { 201: { description: 'the transport', schema: transportSchema } },
  errors: [VALIDATION, notFoundRow('router'), capacityRow('transports')],
});

export const connectTransport = relayRoute({
  method: 'post',
  path: '/v1/transports/{id}/connect',
  summary: "Connect a transport with the client's DTLS parameters (once)",
  body: connectTransportBody,
  success: { 200: { description: 'connected', schema: connectedSchema } },
  errors: [VALIDATION, notFoundRow('transport'), errorRow('CONFLICT', 'already connected or being connected')],
});

export const closeTransport = relayRoute({
  method: 'delete',
  path: '/v1/transports/{id}',
  summary: 'Close a transport (its producers, their consumers and its own consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('transport')],
});
