// werift peers playing the browser's part against the relay (see sdp.ts for the exchange itself).
import {
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RTCRtpHeaderExtensionParameters,
  type MediaStreamTrack,
  type RTCRtpTransceiver,
  type RtpPacket,
} from 'werift';
import { AUDIO_LEVEL_URI, opusPacket, readOpusPacket, readVp8Packet, vp8Packet, type ReadPacket } from './rtp.js';
import {
  consumerMid,
  dtlsParametersFromSdp,
  MID_EXTENSION_URI,
  parseSdp,
  producerRtpParametersFromOffer,
  writeRecvOffer,
  writeSendAnswer,
  type ConsumerDescription,
  type PeerDtlsParameters,
  type MediaKind,
  type RtpParameters,
  type TransportDescription,
} from './sdp.js';
import { waitFor } from './wait.js';

export const OPUS = 'audio/opus';
export const VP8 = 'video/VP8';

function createPeerConnection(): RTCPeerConnection {
  return new RTCPeerConnection({
    iceServers: [], // nothing leaves the machine: host candidates only
    bundlePolicy: 'max-bundle', // mediasoup runs every track of a transport over one ICE/DTLS association
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ['127.0.0.1'],
    // Media stays on loopback, where the test relay's WebRtcServer listens.
    iceFilterCandidatePair: (pair) => pair.localCandidate.host === '127.0.0.1',
    codecs: {
      audio: [new RTCRtpCodecParameters({ mimeType: OPUS, clockRate: 48000, channels: 2, payloadType: 111 })],
      video: [
        new RTCRtpCodecParameters({
          mimeType: VP8,
          clockRate: 90000,
          payloadType: 96,
          rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }],
        }),
      ],
    },
    headerExtensions: {
      audio: [new RTCRtpHeaderExtensionParameters({ id: 1, uri: MID_EXTENSION_URI })],
      video: [new RTCRtpHeaderExtensionParameters({ id: 1, uri: MID_EXTENSION_URI })],
    },
  });
}

async function waitConnected(pc: RTCPeerConnection, timeoutMs: number): Promise<void> {
  await waitFor(() => pc.connectionState === 'connected', { timeoutMs, what: `peer connection (state ${pc.connectionState})` });
}

export interface SendPeerOptions {
  /** Bytes of filler after the index in every VP8 packet (default 200). */
  videoFillerBytes?: number;
  /**
   * Every opus packet carries the ssrc-audio-level header extension (RFC 6464) with this level,
   * 0 (loudest) to 127 (silence) in -dBov, and the audio rtpParameters declare it: what the relay's
   * speaker observers read; a function gives each packet's level from its index (speech rises and
   * falls). Changeable later with setAudioLevel().
   */
  audioLevel?: AudioLevel;
}

export type AudioLevel = number | ((packetIndex: number) => number);

/** The id this peer gives the ssrc-audio-level extension (the mid extension has 1). */
const AUDIO_LEVEL_ID = 10;

/**
 * A peer that sends one opus and one VP8 track into a relay `send` transport.
 *
 * @example
 * const peer = await SendPeer.create(sendTransport)
 * await relay.connectTransport(sendTransport.id, peer.dtlsParameters)
 * await peer.connected()
 * await relay.produce({ transportId, kind: 'audio', rtpParameters: peer.rtpParameters.audio })
 * peer.start()
 */
export class SendPeer {
  /** Packets handed to werift so far, per kind; the index of the next packet. */
  readonly sent = { audio: 0, video: 0 };
  /** PLIs received from the relay (each answered with a keyframe). */
  pliCount = 0;
  /** Failures of werift's sendRtp (none expected while the peer is open). */
  readonly sendErrors: unknown[] = [];
  private keyframeWanted = true;
  private readonly seq = { audio: randomUint16(), video: randomUint16() };
  private readonly ts = { audio: randomUint32(), video: randomUint32() };
  private pictureId = randomUint16() & 0x7fff;
  private timers: NodeJS.Timeout[] = [];

  private constructor(
    private readonly pc: RTCPeerConnection,
    private readonly transceivers: Record<MediaKind, RTCRtpTransceiver>,
    /** Role and fingerprint for POST …/transports/:id/connect. */
    readonly dtlsParameters: PeerDtlsParameters,
    /** rtpParameters for POST /producers, per kind. */
    readonly rtpParameters: Record<MediaKind, RtpParameters>,
    private readonly options: SendPeerOptions,
  ) {
    this.options = { ...options };
    transceivers.video.sender.onPictureLossIndication.subscribe(() => {
      this.pliCount += 1;
      this.keyframeWanted = true;
    });
  }

  static async create(transport: TransportDescription, options: SendPeerOptions = {}): Promise<SendPeer> {
    const pc = createPeerConnection();
    const audio = pc.addTransceiver('audio', { direction: 'sendonly' });
    const video = pc.addTransceiver('video', { direction: 'sendonly' });
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    const parsedOffer = parseSdp(offer.sdp);
    const answer = writeSendAnswer(parsedOffer, transport, [OPUS, VP8]);
    await pc.setRemoteDescription({ type: 'answer', sdp: answer });
    const rtpParameters = {
      audio: producerRtpParametersFromOffer(parsedOffer, midOf(audio), OPUS),
      video: producerRtpParametersFromOffer(parsedOffer, midOf(video), VP8),
    };
    // Not negotiated in the SDP (werift does not offer it): werift sends the extensions a packet carries,
    // and the relay reads them by the ids of the producer's rtpParameters.
    if (options.audioLevel !== undefined) {
      rtpParameters.audio.headerExtensions = [...(rtpParameters.audio.headerExtensions ?? []), { uri: AUDIO_LEVEL_URI, id: AUDIO_LEVEL_ID }];
    }
    // The offer said actpass and the relay answered passive: this peer is the DTLS client.
    const { fingerprints } = dtlsParametersFromSdp(offer.sdp);
    return new SendPeer(pc, { audio, video }, { role: 'client', fingerprints }, rtpParameters, options);
  }

  connected(timeoutMs = 10_000): Promise<void> {
    return waitConnected(this.pc, timeoutMs);
  }

  /** The level the next opus packets carry (only for a peer created with `audioLevel`). */
  setAudioLevel(level: AudioLevel): void {
    if (this.options.audioLevel === undefined) throw new Error('this peer was created without audioLevel');
    this.options.audioLevel = level;
  }

  /** Writes the next opus packet (20 ms of audio). */
  sendAudio(): void {
    const option = this.options.audioLevel;
    const level = typeof option === 'function' ? option(this.sent.audio) : option;
    const packet = opusPacket(this.sent.audio, this.seq.audio, this.ts.audio, level === undefined ? undefined : { id: AUDIO_LEVEL_ID, level });
    this.sent.audio += 1;
    this.seq.audio = (this.seq.audio + 1) & 0xffff;
    this.ts.audio = (this.ts.audio + 960) >>> 0;
    this.transceivers.audio.sender.sendRtp(packet).catch((error: unknown) => this.sendErrors.push(error));
  }

  /** Writes the next one-packet VP8 frame: a keyframe first and after every PLI. */
  sendVideo(): void {
    const keyframe = this.keyframeWanted;
    this.keyframeWanted = false;
    const packet = vp8Packet(this.sent.video, this.seq.video, this.ts.video, this.pictureId, keyframe, this.options.videoFillerBytes);
    this.sent.video += 1;
    this.seq.video = (this.seq.video + 1) & 0xffff;
    this.ts.video = (this.ts.video + 3000) >>> 0;
    this.pictureId = (this.pictureId + 1) & 0x7fff;
    this.transceivers.video.sender.sendRtp(packet).catch((error: unknown) => this.sendErrors.push(error));
  }

  /**
   * Sends a packet made elsewhere (real opus or VP8 from an encoder such as ffmpeg) on the track of
   * `kind`: werift gives it this peer's ssrc and payload type; sequence numbers and timestamps stay the encoder's.
   */
  forwardRtp(kind: MediaKind, packet: RtpPacket): void {
    this.sent[kind] += 1;
    this.transceivers[kind].sender.sendRtp(packet).catch((error: unknown) => this.sendErrors.push(error));
  }

  /** Sends audio every 20 ms and video at 30 frames/s until stop(). */
  start(): void {
    if (this.timers.length) return;
    this.timers = [setInterval(() => this.sendAudio(), 20), setInterval(() => this.sendVideo(), 33)];
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  async close(): Promise<void> {
    this.stop();
    await this.pc.close();
  }
}

/**
 * A peer that receives the relay's consumers on a `recv` transport and records every RTP packet
 * per consumer id.
 */
export class RecvPeer {
  private constructor(
    private readonly pc: RTCPeerConnection,
    /** Role and fingerprint for POST …/transports/:id/connect. */
    readonly dtlsParameters: PeerDtlsParameters,
    /** Every RTP packet received, per consumer id, in arrival order. */
    readonly received: Map<string, ReadPacket[]>,
  ) {}

  static async create(transport: TransportDescription, consumers: ConsumerDescription[]): Promise<RecvPeer> {
    const pc = createPeerConnection();
    const byMid = new Map(consumers.map((c) => [consumerMid(c), c]));
    const received = new Map(consumers.map((c) => [c.id, [] as ReadPacket[]]));
    const attach = (track: MediaStreamTrack, transceiver: RTCRtpTransceiver) => {
      const consumer = transceiver.mid ? byMid.get(transceiver.mid) : undefined;
      if (!consumer) return;
      const list = received.get(consumer.id)!;
      const read = consumer.kind === 'audio' ? readOpusPacket : readVp8Packet;
      // Real encoder output (an ingest) carries no index: such packets are counted with index -1.
      track.onReceiveRtp.subscribe((packet: RtpPacket) => {
        try {
          list.push(read(packet));
        } catch {
          list.push({ index: -1, sequenceNumber: packet.header.sequenceNumber, keyframe: false });
        }
      });
    };
    pc.onRemoteTransceiverAdded.subscribe((transceiver) => transceiver.onTrack.subscribe(attach));

    await pc.setRemoteDescription({ type: 'offer', sdp: writeRecvOffer(transport, consumers) });
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    return new RecvPeer(pc, dtlsParametersFromSdp(answer.sdp), received);
  }

  connected(timeoutMs = 10_000): Promise<void> {
    return waitConnected(this.pc, timeoutMs);
  }

  count(consumerId: string): number {
    return this.received.get(consumerId)?.length ?? 0;
  }

  async close(): Promise<void> {
    await this.pc.close();
  }
}

function midOf(transceiver: RTCRtpTransceiver): string {
  if (!transceiver.mid) throw new Error('transceiver has no mid after setLocalDescription');
  return transceiver.mid;
}

function randomUint16(): number {
  return Math.floor(Math.random() * 0x10000);
}

function randomUint32(): number {
  return Math.floor(Math.random() * 0x100000000) >>> 0;
}
