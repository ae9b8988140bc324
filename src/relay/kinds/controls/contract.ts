// Controls of live producers, consumers and transports: pause and resume, layers,
// priority, key frames, ICE restart, the incoming bitrate cap, and the engine's stats. Every state
// change goes through mediasoup's API, so its observers fire (and the events follow).
import { z } from 'zod';
import { anyObject, int } from '../../contract/common.js';
import { consumerStateSchema } from '../consumers/contract.js';
import { errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { iceParametersView } from '../../contract/rtp.js';

export const CONTROL_BOUNDS = {
  /**
   * Spatial layer index: a simulcast producer has at most BOUNDS.encodings (16) streams, an SVC one at
   * most 5 spatial layers (BOUNDS.scalabilityMode); the worker clamps to what the producer has.
   */
  spatialLayer: { min: 0, max: 15 },
  /** Temporal layer index: libwebrtc has at most 4 temporal layers (kMaxTemporalStreams). */
  temporalLayer: { min: 0, max: 3 },
  /** mediasoup: consumer priority 1 (lowest, the default) to 255. */
  priority: { min: 1, max: 255 },
  /** Bits per second a transport may receive: 10 kbps (one audio stream) to 100 Mbps. */
  maxIncomingBitrate: { min: 10_000, max: 100_000_000 },
} as const;

export const preferredLayersBody = z.object({
  spatialLayer: int(CONTROL_BOUNDS.spatialLayer),
  temporalLayer: int(CONTROL_BOUNDS.temporalLayer).optional(),
});

export const priorityBody = z.object({ priority: int(CONTROL_BOUNDS.priority) });

export const maxIncomingBitrateBody = z.object({ bitrate: int(CONTROL_BOUNDS.maxIncomingBitrate) });

export type ConsumerLayersInput = z.infer<typeof preferredLayersBody>;

const stateOf = (what: string) => z.object({ id: z.string(), paused: z.boolean() }).describe(what);
const layers = z.object({ spatialLayer: z.int(), temporalLayer: z.int().optional() }).nullable();

/** The engine's stats entries, as mediasoup reports them (one object per stream or transport). */
export const statsSchema = z.array(anyObject);
export const consumerLayersSchema = z.object({ id: z.string(), preferredLayers: layers, currentLayers: layers });
export const consumerPrioritySchema = z.object({ id: z.string(), priority: z.int() });
export const iceRestartSchema = z.object({ id: z.string(), iceParameters: iceParametersView });

export const pauseProducer = relayRoute({
  method: 'post',
  path: '/v1/producers/{id}/pause',
  summary: 'Pause a producer (mute): its consumers report producerPaused',
  success: { 200: { description: 'paused', schema: stateOf('paused: true') } },
  errors: [notFoundRow('producer')],
});

export const resumeProducer = relayRoute({
  method: 'post',
  path: '/v1/producers/{id}/resume',
  summary: 'Resume a producer (unmute)',
  success: { 200: { description: 'resumed', schema: stateOf('paused: false') } },
  errors: [notFoundRow('producer')],
});

export const producerStats = relayRoute({
  method: 'get',
  path: '/v1/producers/{id}/stats',
  summary: "The producer's RTP stats, as the engine reports them (one entry per stream)",
  success: { 200: { description: 'stats', schema: statsSchema } },
  errors: [notFoundRow('producer')],
});

export const pauseConsumer = relayRoute({
  method: 'post',
  path: '/v1/consumers/{id}/pause',
  summary: 'Pause a consumer (stop forwarding to this receiver)',
  success: { 200: { description: 'paused (paused: true)', schema: consumerStateSchema } },
  errors: [notFoundRow('consumer')],
});

export const setConsumerPreferredLayers = relayRoute({
  method: 'post',
  path: '/v1/consumers/{id}/preferred-layers',
  summary: 'Choose the spatial (and temporal) layer a simulcast or SVC consumer forwards',
  body: preferredLayersBody,
  success: { 200: { description: 'the layers now preferred, and those forwarded (null until the engine has chosen one)', schema: consumerLayersSchema } },
  errors: [VALIDATION, notFoundRow('consumer'), errorRow('CONFLICT', 'the consumer is not simulcast or SVC; details {consumerId, type}')],
});

export const setConsumerPriority = relayRoute({
  method: 'post',
  path: '/v1/consumers/{id}/priority',
  summary: 'Set the share of the available bitrate this consumer gets (1-255)',
  body: priorityBody,
  success: { 200: { description: 'priority set', schema: consumerPrioritySchema } },
  errors: [VALIDATION, notFoundRow('consumer')],
});

export const requestConsumerKeyFrame = relayRoute({
  method: 'post',
  path: '/v1/consumers/{id}/key-frame',
  summary: 'Ask the sender for a key frame (PLI/FIR to the producer)',
  success: { 204: { description: 'requested', schema: null } },
  errors: [notFoundRow('consumer')],
});

export const consumerStats = relayRoute({
  method: 'get',
  path: '/v1/consumers/{id}/stats',
  summary: "The consumer's RTP stats (its own and its producer's stream)",
  success: { 200: { description: 'stats', schema: statsSchema } },
  errors: [notFoundRow('consumer')],
});

export const restartTransportIce = relayRoute({
  method: 'post',
  path: '/v1/transports/{id}/restart-ice',
  summary: 'Restart ICE: new local usernameFragment and password for the client to use',
  success: { 200: { description: 'the new ICE parameters', schema: iceRestartSchema } },
  errors: [notFoundRow('transport')],
});

export const setTransportMaxIncomingBitrate = relayRoute({
  method: 'post',
  path: '/v1/transports/{id}/max-incoming-bitrate',
  summary: 'Cap the bitrate the transport receives (bps, 10 000-100 000 000)',
  body: maxIncomingBitrateBody,
  success: { 204: { description: 'set', schema: null } },
  errors: [VALIDATION, notFoundRow('transport')],
});

export const transportStats = relayRoute({
  method: 'get',
  path: '/v1/transports/{id}/stats',
  summary: "The transport's stats (ICE, DTLS, bytes and bitrates)",
  success: { 200: { description: 'stats', schema: statsSchema } },
  errors: [notFoundRow('transport')],
});
