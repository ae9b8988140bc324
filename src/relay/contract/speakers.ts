// `speakerDetection` of POST /routers: which of mediasoup's audio observers a room gets.
import { z } from 'zod';
import { int } from './common.js';

export const SPEAKER_BOUNDS = {
  /** How often the audio level observer reports: 100 ms (UI meters) to 10 s. */
  intervalMs: { min: 100, max: 10_000 },
  /** dBov: -127 (silence as RFC 6464 encodes it) to 0 (loudest); mediasoup's default is -80. */
  thresholdDb: { min: -127, max: 0 },
  /** Loudest producers an audio level report lists (mediasoup's maxEntries): fixed, no room shows more tiles speaking. */
  maxEntries: 16,
} as const;

export const speakerDetectionSchema = z
  .object({
    activeSpeaker: z.boolean().optional(),
    audioLevels: z.object({ intervalMs: int(SPEAKER_BOUNDS.intervalMs), thresholdDb: int(SPEAKER_BOUNDS.thresholdDb) }).optional(),
  })
  .meta({
    description:
      "Every audio producer of the router joins mediasoup's ActiveSpeakerObserver (activeSpeaker: true) and/or AudioLevelObserver (audioLevels) when it is created and leaves on close.",
  });

export type SpeakerDetection = z.infer<typeof speakerDetectionSchema>;
