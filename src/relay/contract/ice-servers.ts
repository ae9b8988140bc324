// TURN credentials for a signaling server that builds its clients' ICE servers itself; the
// transport creation answer carries the same `iceServers` when TURN is configured.
import { z } from 'zod';
import { VALIDATION } from './errors.js';
import { relayRoute } from './route.js';

/** One RTCIceServer (mediasoup-client's createSendTransport/createRecvTransport `iceServers` option). */
export const iceServerSchema = z.strictObject({
  urls: z.array(z.string()).describe('turn: and turns: URLs (TURN_URLS)'),
  username: z.string().describe('`<expiry unix seconds>:<user key>` (TURN REST scheme)'),
  credential: z.string().describe('base64(HMAC-SHA1(TURN_SECRET, username))'),
});

export const iceServersBody = z.strictObject({
  userId: z
    .union([z.string().regex(/^[A-Za-z0-9_.@+-]{1,128}$/, '1-128 of A-Za-z0-9_.@+-'), z.int().min(0).max(Number.MAX_SAFE_INTEGER)])
    .optional()
    .describe('the user key written into the username (coturn logs it); absent: a random one'),
});

export const iceServersSchema = z.strictObject({
  iceServers: z.array(iceServerSchema).describe('empty when TURN is not configured (TURN_URLS unset)'),
  expiresIn: z.int().describe('seconds the credential stays valid (TURN_CREDENTIAL_TTL_S); 0 when iceServers is empty'),
});

export const createIceServers = relayRoute({
  method: 'post',
  path: '/v1/ice-servers',
  summary: 'TURN servers with a short-lived credential for one user (RTCPeerConnection iceServers)',
  body: iceServersBody,
  success: { 200: { description: 'the ICE servers', schema: iceServersSchema } },
  errors: [VALIDATION],
});
