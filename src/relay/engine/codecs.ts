// The codecs a router offers when POST /internal/v1/routers names none.
import type { types as ms } from 'mediasoup';

/**
 * A router's media codec, as `worker.createRouter()` takes it: `RtpCodecCapability` in mediasoup 3.11,
 * `RouterRtpCodecCapability` upstream (where `preferredPayloadType` became required in the former and
 * stays optional here). Derived from the method, so the code type-checks against both.
 */
export type RouterMediaCodec = NonNullable<NonNullable<Parameters<ms.Worker['createRouter']>[0]>['mediaCodecs']>[number];

export const DEFAULT_MEDIA_CODECS: readonly RouterMediaCodec[] = [
  { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 },
  { kind: 'video', mimeType: 'video/VP8', clockRate: 90000 },
  { kind: 'video', mimeType: 'video/VP9', clockRate: 90000 },
  {
    kind: 'video',
    mimeType: 'video/H264',
    clockRate: 90000,
    parameters: { 'packetization-mode': 1, 'profile-level-id': '42e01f', 'level-asymmetry-allowed': 1 },
  },
];

/**
 * A deep copy of validated router codecs (flat members, a flat `parameters` record and an array of flat
 * `rtcpFeedback` entries: the request schema admits nothing deeper). The engine normalises the codecs
 * it is given in place, so every router gets its own copy; this one costs a few dozen nanoseconds where
 * structuredClone costs microseconds on every router created.
 */
export function copyCodecs(codecs: readonly RouterMediaCodec[]): RouterMediaCodec[] {
  return codecs.map((codec) => {
    const copy = { ...codec };
    if (codec.parameters) copy.parameters = { ...(codec.parameters as Record<string, unknown>) }; // `any` in 3.11's typings
    if (codec.rtcpFeedback) copy.rtcpFeedback = codec.rtcpFeedback.map((feedback) => ({ ...feedback }));
    return copy;
  });
}
