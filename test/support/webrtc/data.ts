// A werift peer with one SCTP association to a relay transport created with enableSctp, for data
// producers and consumers. The relay side is written as an offer (ICE-lite, setup actpass, one
// m=application section with the transport's SCTP port); the peer answers and is the DTLS client.
// Channels are negotiated (no DCEP): the stream id comes from the relay's answers, as with mediasoup-client.
import { RTCPeerConnection, type RTCDataChannel } from 'werift';
import { dtlsParametersFromSdp, type PeerDtlsParameters, type TransportDescription } from './sdp.js';
import { waitFor } from './wait.js';

export type SctpTransportDescription = TransportDescription & { sctpParameters?: { port: number; maxMessageSize: number } };

export class DataPeer {
  private constructor(
    private readonly pc: RTCPeerConnection,
    /** Role and fingerprint for POST …/transports/:id/connect. */
    readonly dtlsParameters: PeerDtlsParameters,
  ) {}

  static async create(transport: SctpTransportDescription): Promise<DataPeer> {
    if (!transport.sctpParameters) throw new Error('the transport was created without enableSctp');
    const pc = new RTCPeerConnection({
      iceServers: [],
      bundlePolicy: 'max-bundle',
      iceUseIpv6: false,
      iceAdditionalHostAddresses: ['127.0.0.1'],
      iceFilterCandidatePair: (pair) => pair.localCandidate.host === '127.0.0.1',
    });
    await pc.setRemoteDescription({ type: 'offer', sdp: writeDataOffer(transport) });
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    return new DataPeer(pc, dtlsParametersFromSdp(answer.sdp));
  }

  connected(timeoutMs = 10_000): Promise<void> {
    return waitFor(() => this.pc.connectionState === 'connected', { timeoutMs, what: `data peer connection (state ${this.pc.connectionState})` });
  }

  /** A negotiated channel on the stream the relay named (a data producer's or consumer's sctpStreamParameters). */
  channel(label: string, sctp: { streamId: number; ordered: boolean }, protocol = ''): RTCDataChannel {
    return this.pc.createDataChannel(label, { negotiated: true, id: sctp.streamId, ordered: sctp.ordered, protocol });
  }

  async close(): Promise<void> {
    await this.pc.close();
  }
}

function writeDataOffer(transport: SctpTransportDescription): string {
  const lines = ['v=0', `o=mediasoup ${Date.now()} 1 IN IP4 0.0.0.0`, 's=-', 't=0 0', 'a=ice-lite', 'a=group:BUNDLE 0', 'a=msid-semantic: WMS *'];
  for (const fp of transport.dtlsParameters.fingerprints) lines.push(`a=fingerprint:${fp.algorithm} ${fp.value}`);
  lines.push(
    'm=application 7 UDP/DTLS/SCTP webrtc-datachannel',
    'c=IN IP4 127.0.0.1',
    'a=mid:0',
    `a=ice-ufrag:${transport.iceParameters.usernameFragment}`,
    `a=ice-pwd:${transport.iceParameters.password}`,
  );
  for (const c of transport.iceCandidates.filter((c) => c.protocol === 'udp')) {
    lines.push(`a=candidate:${c.foundation} 1 udp ${c.priority} ${c.ip} ${c.port} typ ${c.type}`);
  }
  lines.push('a=end-of-candidates', 'a=setup:actpass', `a=sctp-port:${transport.sctpParameters!.port}`, `a=max-message-size:${transport.sctpParameters!.maxMessageSize}`);
  return `${lines.join('\r\n')}\r\n`;
}
