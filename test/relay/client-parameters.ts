// rtpParameters as real clients send them to a signaling server, which hands them to the relay
// unchanged. The Chrome ones were captured from Chromium 156 (headless, fake devices) running
// mediasoup-client 3.18.7's Chrome111 handler against a router with the relay's default codecs
// (2026-11-23): `transport.on('produce')` gave them as they are here, ssrcs aside. The Firefox one
// and the H264 fmtp with SPS/PPS are written after Firefox 120's and hardware encoders' SDP. The
// input bounds must accept them all.

let nextSsrc = 2_000_000_000;
const ssrc = () => nextSsrc++;

/** Chrome's RTCP feedback for every video codec (RTX aside). */
const chromeVideoFeedback = () => [{ type: 'goog-remb', parameter: '' }, { type: 'transport-cc', parameter: '' }, { type: 'ccm', parameter: 'fir' }, { type: 'nack', parameter: '' }, { type: 'nack', parameter: 'pli' }];

type CodecParameters = { mimeType: string; payloadType: number; clockRate: number; parameters: Record<string, string | number>; rtcpFeedback: { type: string; parameter: string }[] };

/** A Chrome video codec and its RTX, on the payload type after it. */
function chromeVideoCodecs(mimeType: string, payloadType: number, parameters: Record<string, string | number>): CodecParameters[] {
  return [
    { mimeType, payloadType, clockRate: 90000, parameters, rtcpFeedback: chromeVideoFeedback() },
    { mimeType: 'video/rtx', payloadType: payloadType + 1, clockRate: 90000, parameters: { apt: payloadType }, rtcpFeedback: [] },
  ];
}

/** The header extensions of Chrome's video m-sections; abs-capture-time's id is the one that varies. */
function chromeVideoHeaderExtensions(absCaptureTimeId: number) {
  return [
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 4, encrypt: false, parameters: {} },
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id', id: 10, encrypt: false, parameters: {} },
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id', id: 11, encrypt: false, parameters: {} },
    { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', id: 2, encrypt: false, parameters: {} },
    { uri: 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01', id: 3, encrypt: false, parameters: {} },
    { uri: 'urn:3gpp:video-orientation', id: 13, encrypt: false, parameters: {} },
    { uri: 'urn:ietf:params:rtp-hdrext:toffset', id: 14, encrypt: false, parameters: {} },
    { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time', id: absCaptureTimeId, encrypt: false, parameters: {} },
  ];
}

export function chromeOpus() {
  const primary = ssrc();
  return {
    mid: '0',
    codecs: [
      { mimeType: 'audio/opus', payloadType: 111, clockRate: 48000, channels: 2, parameters: { minptime: 10, useinbandfec: 1, 'sprop-stereo': 1, usedtx: 1 }, rtcpFeedback: [{ type: 'transport-cc', parameter: '' }] },
    ],
    headerExtensions: [
      { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 4, encrypt: false, parameters: {} },
      { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', id: 2, encrypt: false, parameters: {} },
      { uri: 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01', id: 3, encrypt: false, parameters: {} },
      { uri: 'urn:ietf:params:rtp-hdrext:ssrc-audio-level', id: 1, encrypt: false, parameters: {} },
      { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time', id: 5, encrypt: false, parameters: {} },
    ],
    encodings: [
      { ssrc: primary, dtx: false },
    ],
    rtcp: { cname: 'zyW36EpEB5q+4Zwi', reducedSize: true },
    msid: 'ba548f7d-b468-42d8-b13c-aaaea1b2ad59 e01a820a-b85e-401a-8d6e-cd6b82ee62da',
  };
}

/** Simulcast: encodings given as { scaleResolutionDownBy, maxBitrate, scalabilityMode: 'L1T3' }; mediasoup-client adds rid and active. */
export function chromeSimulcastVp8() {
  return {
    mid: '1',
    codecs: chromeVideoCodecs('video/VP8', 96, {}),
    headerExtensions: chromeVideoHeaderExtensions(15),
    encodings: [
      { active: true, scalabilityMode: 'L1T3', scaleResolutionDownBy: 4, maxBitrate: 500000, rid: 'r0', dtx: false },
      { active: true, scalabilityMode: 'L1T3', scaleResolutionDownBy: 2, maxBitrate: 1000000, rid: 'r1', dtx: false },
      { active: true, scalabilityMode: 'L1T3', scaleResolutionDownBy: 1, maxBitrate: 5000000, rid: 'r2', dtx: false },
    ],
    rtcp: { cname: '', reducedSize: true },
    msid: 'ba548f7d-b468-42d8-b13c-aaaea1b2ad59 34af6343-c7d6-4f53-bd3c-d04635625a52',
  };
}

/** VP9 SVC: one encoding given as { scalabilityMode: 'L3T3_KEY', maxBitrate }. */
export function chromeSvcVp9() {
  const primary = ssrc();
  ssrc();
  return {
    mid: '2',
    codecs: chromeVideoCodecs('video/VP9', 98, { 'profile-id': 0 }),
    headerExtensions: chromeVideoHeaderExtensions(5),
    encodings: [
      { ssrc: primary, rtx: { ssrc: primary + 1 }, active: true, scalabilityMode: 'L3T3_KEY', maxBitrate: 3000000, dtx: false },
    ],
    rtcp: { cname: 'zyW36EpEB5q+4Zwi', reducedSize: true },
    msid: 'ba548f7d-b468-42d8-b13c-aaaea1b2ad59 0f121b5a-ffd3-44df-bca9-98108a0c41cf',
  };
}

export function chromeH264() {
  const primary = ssrc();
  ssrc();
  return {
    mid: '3',
    codecs: chromeVideoCodecs('video/H264', 108, { 'level-asymmetry-allowed': 1, 'packetization-mode': 1, 'profile-level-id': '42e01f' }),
    headerExtensions: chromeVideoHeaderExtensions(5),
    encodings: [
      { ssrc: primary, rtx: { ssrc: primary + 1 }, dtx: false },
    ],
    rtcp: { cname: 'zyW36EpEB5q+4Zwi', reducedSize: true },
    msid: 'ba548f7d-b468-42d8-b13c-aaaea1b2ad59 d50ba805-4303-48e0-807e-0dde4d0d4cbc',
  };
}

/** device.rtpCapabilities after device.load() with a router of the relay's default codecs. */
export function chromeRecvCapabilities() {
  return {
    codecs: [
      { kind: 'audio', mimeType: 'audio/opus', preferredPayloadType: 100, clockRate: 48000, channels: 2, parameters: { minptime: 10, useinbandfec: 1 }, rtcpFeedback: [{ type: 'transport-cc', parameter: '' }] },
      { kind: 'video', mimeType: 'video/VP8', preferredPayloadType: 101, clockRate: 90000, parameters: {}, rtcpFeedback: chromeVideoFeedback() },
      { kind: 'video', mimeType: 'video/rtx', preferredPayloadType: 102, clockRate: 90000, parameters: { apt: 101 }, rtcpFeedback: [] },
      { kind: 'video', mimeType: 'video/VP9', preferredPayloadType: 103, clockRate: 90000, parameters: { 'profile-id': 0 }, rtcpFeedback: chromeVideoFeedback() },
      { kind: 'video', mimeType: 'video/rtx', preferredPayloadType: 104, clockRate: 90000, parameters: { apt: 103 }, rtcpFeedback: [] },
      { kind: 'video', mimeType: 'video/H264', preferredPayloadType: 105, clockRate: 90000, parameters: { 'level-asymmetry-allowed': 1, 'packetization-mode': 1, 'profile-level-id': '42e01f' }, rtcpFeedback: chromeVideoFeedback() },
      { kind: 'video', mimeType: 'video/rtx', preferredPayloadType: 106, clockRate: 90000, parameters: { apt: 105 }, rtcpFeedback: [] },
    ],
    headerExtensions: [
      { kind: 'video', uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', preferredId: 1, preferredEncrypt: false, direction: 'sendrecv' },
      { kind: 'video', uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', preferredId: 4, preferredEncrypt: false, direction: 'sendrecv' },
      { kind: 'video', uri: 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01', preferredId: 5, preferredEncrypt: false, direction: 'sendrecv' },
      { kind: 'audio', uri: 'urn:ietf:params:rtp-hdrext:ssrc-audio-level', preferredId: 10, preferredEncrypt: false, direction: 'sendrecv' },
      { kind: 'video', uri: 'urn:3gpp:video-orientation', preferredId: 11, preferredEncrypt: false, direction: 'sendrecv' },
      { kind: 'video', uri: 'urn:ietf:params:rtp-hdrext:toffset', preferredId: 12, preferredEncrypt: false, direction: 'sendrecv' },
    ],
  };
}

/** Chrome's H264 as a hardware encoder announces it: the SPS/PPS in `sprop-parameter-sets` (RFC 6184). */
export function h264WithSpropParameterSets() {
  const captured = chromeH264();
  const [h264, rtx] = captured.codecs;
  const parameters = { ...h264!.parameters, 'sprop-parameter-sets': 'Z0LAH9oBQBbsBEAAAAMAQAAADyPGDKg=,aM4PyA==' };
  return { ...captured, mid: '5', codecs: [{ ...h264!, parameters }, rtx!] };
}

/** Firefox's camera in simulcast: its cname is a braced UUID, its VP8 fmtp carries max-fs/max-fr. */
export function firefoxSimulcastVp8(mid = '4') {
  return {
    mid,
    codecs: [
      {
        mimeType: 'video/VP8',
        payloadType: 120,
        clockRate: 90000,
        parameters: { 'max-fs': 12288, 'max-fr': 60 },
        rtcpFeedback: [
          { type: 'nack', parameter: '' },
          { type: 'nack', parameter: 'pli' },
          { type: 'ccm', parameter: 'fir' },
          { type: 'goog-remb', parameter: '' },
          { type: 'transport-cc', parameter: '' },
        ],
      },
      { mimeType: 'video/rtx', payloadType: 124, clockRate: 90000, parameters: { apt: 120 }, rtcpFeedback: [] },
    ],
    headerExtensions: [
      { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 3, encrypt: false, parameters: {} },
      { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', id: 4, encrypt: false, parameters: {} },
      { uri: 'urn:ietf:params:rtp-hdrext:toffset', id: 5, encrypt: false, parameters: {} },
      { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/playout-delay', id: 6, encrypt: false, parameters: {} },
      { uri: 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01', id: 7, encrypt: false, parameters: {} },
      { uri: 'urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id', id: 10, encrypt: false, parameters: {} },
      { uri: 'urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id', id: 11, encrypt: false, parameters: {} },
    ],
    encodings: [
      { rid: 'r0', active: true, scaleResolutionDownBy: 4, maxBitrate: 500_000 },
      { rid: 'r1', active: true, scaleResolutionDownBy: 2, maxBitrate: 1_000_000 },
      { rid: 'r2', active: true, maxBitrate: 5_000_000 },
    ],
    rtcp: { cname: '{a2f7a5f2-6a18-4b9d-9b5b-2e1c3c9a2b1f}', reducedSize: true },
  };
}
