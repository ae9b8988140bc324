// Bodies of the control endpoints (src/relay/http/controls.routes.ts), each member bounded.
import { z } from 'zod';

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

const int = (range: { min: number; max: number }) => z.number().int().min(range.min).max(range.max);

export const preferredLayersBody = z.object({
  spatialLayer: int(CONTROL_BOUNDS.spatialLayer),
  temporalLayer: int(CONTROL_BOUNDS.temporalLayer).optional(),
});

export const priorityBody = z.object({ priority: int(CONTROL_BOUNDS.priority) });

export const maxIncomingBitrateBody = z.object({ bitrate: int(CONTROL_BOUNDS.maxIncomingBitrate) });

export type ConsumerLayersInput = z.infer<typeof preferredLayersBody>;
