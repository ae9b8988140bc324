// WHIP (RFC 9725) and WHEP endpoints as the signaling server mints them: one per publisher or player
// (or per room, for WHEP), each with a bearer token handed out once and kept only as a keyed digest,
// a bounded lifetime, and an absolute URL the client posts its offer to (public.ts serves it).
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { appDataView, id, timeString } from '../../contract/common.js';
import { capacityRow, errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';

/** Seconds an endpoint's token is taken: 10 s to a day, an hour by default. */
export const TTL_S = { min: 10, max: 86_400, default: 3600 } as const;

const ttlS = z
  .int()
  .min(TTL_S.min)
  .max(TTL_S.max)
  .optional()
  .describe(`seconds the token is taken for new sessions (${TTL_S.min}-${TTL_S.max}, default ${TTL_S.default}); sessions already started go on`);

export const createWhipEndpointBody = z.object({
  routerId: id,
  appData: appDataSchema.optional().describe("given to the endpoint's sessions: their transports' and producers' appData carry it"),
  ttlS,
});

export const createWhepEndpointBody = z.object({
  routerId: id,
  producerIds: z
    .array(id)
    .min(1)
    .max(64)
    .optional()
    .describe("the producers a session plays; absent: every producer of the room, present and future (those that appear while a session is open are added to it)"),
  appData: appDataSchema.optional().describe("given to the endpoint's sessions: their transports' and consumers' appData carry it"),
  ttlS,
});

export type CreateWhipEndpointBody = z.infer<typeof createWhipEndpointBody>;
export type CreateWhepEndpointBody = z.infer<typeof createWhepEndpointBody>;

export const endpointSchema = z.object({
  id: z.string(),
  url: z.string().describe('absolute URL a client posts its offer to (WHIP_PUBLIC_URL, else the forwarded origin under TRUST_PROXY, else this request\'s origin)'),
  token: z.string().describe('the bearer token (Authorization: Bearer …); shown once, kept only as a digest'),
  expiresAt: z.string().describe('ISO 8601: after it, the token is refused (401) for new sessions'),
});

export const endpointStateSchema = z.object({
  id: z.string(),
  url: z.string(),
  createdAt: timeString,
  expiresAt: z.string().describe('ISO 8601'),
  appData: appDataView,
  producerIds: z.array(z.string()).optional().describe('WHEP: the producers it plays; absent: every producer of the room'),
  sessions: z.array(z.object({ id: z.string(), transportId: z.string(), producerIds: z.array(z.string()) })).describe('open sessions: their transport and producers (WHIP: made; WHEP: played)'),
});

export const createWhipEndpoint = relayRoute({
  method: 'post',
  path: '/v1/whip-endpoints',
  summary: 'Mint a WHIP endpoint on a router: a URL and a bearer token a publisher (OBS, GStreamer, a browser) posts its offer to',
  body: createWhipEndpointBody,
  success: { 201: { description: 'the endpoint, with its token (shown once)', schema: endpointSchema } },
  errors: [VALIDATION, notFoundRow('router'), capacityRow('whip_endpoints'), errorRow('DRAINING')],
});

export const createWhepEndpoint = relayRoute({
  method: 'post',
  path: '/v1/whep-endpoints',
  summary: "Mint a WHEP endpoint on a router: a URL and a bearer token a player posts its offer to, to receive the room's producers",
  body: createWhepEndpointBody,
  success: { 201: { description: 'the endpoint, with its token (shown once)', schema: endpointSchema } },
  errors: [VALIDATION, notFoundRow('router'), errorRow('NOT_FOUND', 'a producer of producerIds is not in the router; details {resource, id}'), capacityRow('whep_endpoints'), errorRow('DRAINING')],
});

export const closeWhipEndpoint = relayRoute({
  method: 'delete',
  path: '/v1/whip-endpoints/{id}',
  summary: 'Revoke a WHIP endpoint: its token answers 404 from now on, its sessions end (their producers close)',
  success: { 204: { description: 'revoked', schema: null } },
  errors: [notFoundRow('whipEndpoint')],
});

export const closeWhepEndpoint = relayRoute({
  method: 'delete',
  path: '/v1/whep-endpoints/{id}',
  summary: 'Revoke a WHEP endpoint: its token answers 404 from now on, its sessions end',
  success: { 204: { description: 'revoked', schema: null } },
  errors: [notFoundRow('whepEndpoint')],
});
