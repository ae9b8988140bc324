// The SDP a recording's ffmpeg reads: one m-line per track, each on its own loopback port pair
// (RTP, RTCP on the next port), with the codec of the consumer the relay sends there.
import type { types as ms } from 'mediasoup';

export interface SdpTrack {
  kind: 'audio' | 'video';
  port: number;
  rtpParameters: ms.RtpParameters;
}

/** The consumer's media codec: its first codec that is not RTX (consumers are made without RTX anyway). */
export function mediaCodecOf(rtpParameters: ms.RtpParameters): ms.RtpCodecParameters {
  const codec = rtpParameters.codecs.find((c) => !/\/rtx$/i.test(c.mimeType));
  if (!codec) throw new Error('consumer has no media codec');
  return codec;
}

export function recordingSdp(tracks: SdpTrack[]): string {
  const lines = ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=chat-backend recording', 'c=IN IP4 127.0.0.1', 't=0 0'];
  for (const { kind, port, rtpParameters } of tracks) {
    const codec = mediaCodecOf(rtpParameters);
    const [, name] = codec.mimeType.split('/');
    const pt = codec.payloadType;
    lines.push(`m=${kind} ${port} RTP/AVP ${pt}`);
    lines.push(`a=rtpmap:${pt} ${name}/${codec.clockRate}${kind === 'audio' && codec.channels ? `/${codec.channels}` : ''}`);
    // Only known, harmless parameters: the rest are the engine's, and nothing of a request reaches ffmpeg unchecked.
    const fmtp = Object.entries((codec.parameters ?? {}) as Record<string, unknown>)
      .filter(([key, value]) => /^[a-z0-9-]{1,32}$/i.test(key) && /^[A-Za-z0-9+/=,._-]{1,256}$/.test(String(value)))
      .map(([key, value]) => `${key}=${String(value)}`);
    if (fmtp.length) lines.push(`a=fmtp:${pt} ${fmtp.join(';')}`);
    lines.push('a=recvonly');
  }
  return `${lines.join('\r\n')}\r\n`;
}
