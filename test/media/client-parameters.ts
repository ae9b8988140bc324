// rtpParameters as real clients send them to a signaling server, which hands them to the relay
// unchanged: the shapes mediasoup-client 3.18's Chrome111 and Firefox120 handlers build from the
// browsers' SDP (the header extensions are the full lists Chrome 120 and Firefox 120 offer, a
// superset of what mediasoup-client keeps after negotiation). The input bounds must accept them all.

let nextSsrc = 2_000_000_000;
const ssrc = () => nextSsrc++;

const CHROME_AUDIO_EXTENSIONS = [
  { uri: 'urn:ietf:params:rtp-hdrext:ssrc-audio-level', id: 1, encrypt: false, parameters: {} },
  { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', id: 2, encrypt: false, parameters: {} },
  { uri: 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01', id: 3, encrypt: false, parameters: {} },
  { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 4, encrypt: false, parameters: {} },
];

const CHROME_VIDEO_EXTENSIONS = [
  { uri: 'urn:ietf:params:rtp-hdrext:toffset', id: 14, encrypt: false, parameters: {} },
  { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', id: 2, encrypt: false, parameters: {} },
  { uri: 'urn:3gpp:video-orientation', id: 13, encrypt: false, parameters: {} },
  { uri: 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01', id: 3, encrypt: false, parameters: {} },
  { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/playout-delay', id: 5, encrypt: false, parameters: {} },
  { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/video-content-type', id: 6, encrypt: false, parameters: {} },
  { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/video-timing', id: 7, encrypt: false, parameters: {} },
  { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/color-space', id: 8, encrypt: false, parameters: {} },
  { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 4, encrypt: false, parameters: {} },
  { uri: 'urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id', id: 10, encrypt: false, parameters: {} },
  { uri: 'urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id', id: 11, encrypt: false, parameters: {} },
  // Two-byte form (RFC 8285), negotiated by Chrome with a=extmap-allow-mixed.
  { uri: 'https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension', id: 200, encrypt: false, parameters: {} },
];

const CHROME_VIDEO_FEEDBACK = [
  { type: 'goog-remb', parameter: '' },
  { type: 'transport-cc', parameter: '' },
  { type: 'ccm', parameter: 'fir' },
  { type: 'nack', parameter: '' },
  { type: 'nack', parameter: 'pli' },
];

/** Chrome's microphone: opus with its fmtp, DTX on (mediasoup-client `encodings: [{ dtx: true }]`). */
export function chromeOpus() {
  return {
    mid: '0',
    codecs: [
      {
        mimeType: 'audio/opus',
        payloadType: 111,
        clockRate: 48000,
        channels: 2,
        parameters: { minptime: 10, useinbandfec: 1, usedtx: 1, 'sprop-stereo': 0, maxplaybackrate: 48000, 'sprop-maxcapturerate': 48000, stereo: 0 },
        rtcpFeedback: [{ type: 'transport-cc', parameter: '' }],
      },
    ],
    headerExtensions: CHROME_AUDIO_EXTENSIONS,
    encodings: [{ ssrc: ssrc(), dtx: true }],
    rtcp: { cname: 'Hh9q8SmLj1+X9Qm3', reducedSize: true },
  };
}

/** Chrome's camera in simulcast (mediasoup-client's three encodings, each L1T3), VP8 with RTX. */
export function chromeSimulcastVp8(mid = '1') {
  return {
    mid,
    codecs: [
      { mimeType: 'video/VP8', payloadType: 96, clockRate: 90000, parameters: {}, rtcpFeedback: CHROME_VIDEO_FEEDBACK },
      { mimeType: 'video/rtx', payloadType: 97, clockRate: 90000, parameters: { apt: 96 }, rtcpFeedback: [] },
    ],
    headerExtensions: CHROME_VIDEO_EXTENSIONS,
    encodings: [
      { active: true, rid: 'r0', scalabilityMode: 'L1T3', scaleResolutionDownBy: 4, maxBitrate: 500_000, dtx: false },
      { active: true, rid: 'r1', scalabilityMode: 'L1T3', scaleResolutionDownBy: 2, maxBitrate: 1_000_000, dtx: false },
      { active: true, rid: 'r2', scalabilityMode: 'L1T3', scaleResolutionDownBy: 1, maxBitrate: 5_000_000, maxFramerate: 30, dtx: false },
    ],
    rtcp: { cname: 'Hh9q8SmLj1+X9Qm3', reducedSize: true },
  };
}

/** Chrome's camera as VP9 SVC with key-frame-dependent spatial layers (one encoding, L3T3_KEY). */
export function chromeSvcVp9(mid = '2') {
  const primary = ssrc();
  ssrc();
  return {
    mid,
    codecs: [
      { mimeType: 'video/VP9', payloadType: 98, clockRate: 90000, parameters: { 'profile-id': 0 }, rtcpFeedback: CHROME_VIDEO_FEEDBACK },
      { mimeType: 'video/rtx', payloadType: 99, clockRate: 90000, parameters: { apt: 98 }, rtcpFeedback: [] },
    ],
    headerExtensions: CHROME_VIDEO_EXTENSIONS,
    encodings: [{ ssrc: primary, rtx: { ssrc: primary + 1 }, active: true, scalabilityMode: 'L3T3_KEY', maxBitrate: 3_000_000, dtx: false }],
    rtcp: { cname: 'Hh9q8SmLj1+X9Qm3', reducedSize: true },
  };
}

/** Chrome's H264 (constrained baseline) with the SPS/PPS a hardware encoder announces in its fmtp. */
export function chromeH264(mid = '3') {
  const primary = ssrc();
  ssrc();
  return {
    mid,
    codecs: [
      {
        mimeType: 'video/H264',
        payloadType: 102,
        clockRate: 90000,
        parameters: {
          'level-asymmetry-allowed': 1,
          'packetization-mode': 1,
          'profile-level-id': '42e01f',
          'sprop-parameter-sets': 'Z0LAH9oBQBbsBEAAAAMAQAAADyPGDKg=,aM4PyA==',
        },
        rtcpFeedback: CHROME_VIDEO_FEEDBACK,
      },
      { mimeType: 'video/rtx', payloadType: 103, clockRate: 90000, parameters: { apt: 102 }, rtcpFeedback: [] },
    ],
    headerExtensions: CHROME_VIDEO_EXTENSIONS,
    encodings: [{ ssrc: primary, rtx: { ssrc: primary + 1 }, maxBitrate: 2_500_000 }],
    rtcp: { cname: 'Hh9q8SmLj1+X9Qm3', reducedSize: true },
  };
}

/** Firefox's camera in simulcast: its cname is a braced UUID, its VP8 fmtp carries max-fs/max-fr. */
export function firefoxSimulcastVp8(mid = '1') {
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
