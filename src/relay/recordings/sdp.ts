// The SDP a recording's ffmpeg reads: one m-line per track, each on its own loopback port pair
// (RTP, RTCP on the next port), with the codec of the consumer the relay sends there, and a source
// filter naming the relay's own address (rtp-source.ts).
import type { types as ms } from 'mediasoup';
import type { RecordingAddresses } from './rtp-source.js';

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

export function recordingSdp(tracks: SdpTrack[], addresses: RecordingAddresses): string {
  const ip = `IN IP${addresses.family}`;
  const lines = ['v=0', `o=- 0 0 ${ip} ${addresses.listen}`, 's=chat-backend recording', `c=${ip} ${addresses.listen}`, 't=0 0'];
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
    // RFC 4570: ffmpeg passes it on as its rtp protocol's `sources`, dropping packets of any other address.
    lines.push(`a=source-filter: incl ${ip} ${addresses.listen} ${addresses.source}`);
    lines.push('a=recvonly');
  }
  return `${lines.join('\r\n')}\r\n`;
}
