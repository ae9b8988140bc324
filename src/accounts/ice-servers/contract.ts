// The ICE servers a client gives its RTCPeerConnection: TURN with short-lived credentials.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';

/** One RTCIceServer: coturn's URLs and the TURN REST scheme's username and credential. */
export const iceServer = z.strictObject({
  urls: z.array(z.string().max(256)).min(1).max(16).describe('turn: and turns: URLs (RFC 7065)'),
  username: z.string().max(160).describe('`<expiry unix seconds>:<user id>`'),
  credential: z.string().max(64).describe('base64(HMAC-SHA1(TURN_SECRET, username))'),
});

export const iceServers = z.strictObject({
  ice_servers: z.array(iceServer).max(1).describe('empty when the service has no TURN configured (TURN_URLS unset)'),
  expires_in: z.number().int().min(0).describe('seconds the credential stays valid (TURN_CREDENTIAL_TTL_S); 0 when ice_servers is empty'),
});

export type IceServersView = z.output<typeof iceServers>;

export const getIceServers = accountRoute(
  {
    tags: ['ice-servers'],
    method: 'get',
    path: '/ice-servers',
    summary: 'TURN servers and a short-lived credential for WebRTC (RTCPeerConnection iceServers)',
    description:
      'The credential is valid for expires_in seconds (TURN_CREDENTIAL_TTL_S, 300 by default) for every URL listed, to make allocations: an allocation made with it keeps working after it expired while the client refreshes it, so ask again for each new transport or ICE restart. Rate limited per account by RATE_LIMIT_ICE_SERVERS_PER_MIN, counted once the access token is checked (a request without a valid one answers 401 and is not counted).',
    security: BEARER,
    responses: { 200: okResponse('the ICE servers', iceServers) },
  },
  ['invalid_access_token'],
);
