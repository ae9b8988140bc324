// The bounds of every value a relay body may carry to the media engine, each with where it comes
// from. Two findings made them necessary (docs/reliability.md): a 50 KiB `scalabilityMode` killed
// the mediasoup 3.11 worker (its C++ std::regex recurses once per character), and a 200 KiB
// `mimeType` stalled the event loop for tens of seconds (mediasoup's `/.+\/rtx$/i` is quadratic).
// The figures are generous for what browsers send and small enough that no engine code path can
// be made slow or deep with them. docs/media-relay.md has the same table.
import { z } from 'zod';
import { tooDeepAt } from '../../http/json-depth.js';

export const BOUNDS = {
  /**
   * Nesting of a whole /internal body. The deepest field the relay reads is 5 levels down
   * (`rtpParameters.codecs.0.parameters.x`); 16 leaves room for extra fields a signaling server
   * sends and the relay ignores, while mediasoup's recursive clone (JSON.stringify) of a 100 000-deep
   * value overflows the stack.
   */
  bodyDepth: 16,
  /** RFC 6838 §4.2: a media subtype name is at most 127 characters. */
  mimeSubtype: 127,
  /**
   * Codecs of one producer: one per payload type at most (0-127). A browser's offer through
   * mediasoup-client carries the negotiated codec and its RTX (2-4).
   */
  codecs: 128,
  /**
   * Codecs of capabilities: one per payload type too; Chrome's full receive capabilities
   * (RTCRtpReceiver.getCapabilities) list about 50 video and 15 audio codecs.
   */
  capabilityCodecs: 128,
  /**
   * Payload types of a router's media codecs: mediasoup 3.11 hands out the 32 dynamic ones (96-127),
   * one per codec and one more per video codec for its RTX; beyond them it throws a plain Error (a
   * 500). Codecs with a static payload type (PCMU 0, …) are counted too: no real router comes close.
   * Current mediasoup adds 35-63 (61 in all).
   */
  mediaCodecPayloadTypes: 32,
  /** RFC 3550 §6.5: an SDES item (CNAME) is at most 255 octets. Chrome sends 16, Firefox 38. */
  cname: 255,
  /**
   * RFC 8843 identification-tag: the MID travels in an RTP header extension whose one-byte form
   * holds 16 bytes (the worker writes at most 8, RTC::MidMaxLength). Browsers send "0", "1", ….
   */
  mid: 16,
  /**
   * RFC 8830 msid: an id and an app-data token of at most 64 characters each. mediasoup-client 3.18
   * sends "<stream id> <track id>" (73); mediasoup 3.11 keeps it with the producer, current mediasoup
   * forwards it to consumers.
   */
  msid: 129,
  /** RFC 8851 rid-id grammar (alpha-numeric, "-", "_"); 16 bytes fit the one-byte extension. mediasoup-client sends r0-r2. */
  rid: /^[A-Za-z0-9_-]{1,16}$/,
  /**
   * Simulcast encodings / SVC streams of one producer: libwebrtc sends at most 4 (kMaxSimulcastStreams),
   * mediasoup-client 3.18 as many as the app asks for; 16 is ample.
   */
  encodings: 16,
  /**
   * W3C webrtc-svc modes: L|S, spatial layers, T, temporal layers, then "h", "_KEY" or "_KEY_SHIFT".
   * mediasoup 3.11 and current mediasoup parse `^[LS]([1-9]\d?)T([1-9]\d?)(_KEY)?` and ignore the rest
   * (the 3.11 worker with `.*`, which overflows its stack on a long string). Layer counts are those
   * libwebrtc can produce (kMaxSpatialLayers 5, kMaxTemporalStreams 4): the worker sizes per-layer
   * counters by spatial × temporal, so L99T99 would cost it ~10 000 rate counters per stream.
   */
  scalabilityMode: /^[LS][1-5]T[1-4](h|_KEY|_KEY_SHIFT)?$/,
  /**
   * Header extension URIs: the longest registered one a browser offers is 87 characters
   * (`https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension`).
   */
  uri: 256,
  /** RFC 8285: ids 1-14 in the one-byte form, 1-255 in the two-byte form (the worker reads a uint8, refusing 0). */
  headerExtensionId: { min: 1, max: 255 },
  /** Header extensions of one producer: Chrome negotiates about 10 per m-section, ids 1-14. */
  headerExtensions: 32,
  /** Of capabilities: mediasoup's supported list has about 20 (audio and video). */
  capabilityHeaderExtensions: 64,
  /** RTCP feedback entries of one codec: browsers send 5 (goog-remb, transport-cc, ccm fir, nack, nack pli). */
  rtcpFeedback: 16,
  /** RFC 4585 rtcp-fb type and parameter tokens: the longest in use is "transport-cc". */
  rtcpFeedbackToken: 64,
  /** fmtp parameters of one codec: H264 sends 3-4, Opus up to 7; multiopus 4. */
  codecParameters: 32,
  /** fmtp key: "x-google-start-bitrate", "level-asymmetry-allowed" (23) are the longest in use. */
  parameterKey: 64,
  /** fmtp value: H264 `sprop-parameter-sets` (base64 SPS/PPS) can run to a few hundred characters. */
  parameterValue: 1024,
  /** The worker keeps integer codec parameters as int32 (RTC::Parameters). */
  parameterNumber: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  /** RTP clock rates in use: 8000 (G.711) to 90000 (video); L16 formats go to 192000. */
  clockRate: { min: 1, max: 1_000_000 },
  /** SDP encoding parameters; Opus channel mapping (RFC 7845) allows up to 255. The worker reads a uint8. */
  channels: { min: 1, max: 255 },
  /** RFC 3550: SSRCs are 32-bit. */
  ssrc: { min: 0, max: 2 ** 32 - 1 },
  /** Bits per second; the worker reads a uint32. */
  bitrate: { min: 0, max: 2 ** 32 - 1 },
  /** Frames per second (W3C RTCRtpEncodingParameters.maxFramerate); cameras give 5-120. */
  framerate: { min: 0, max: 1000 },
  /** W3C: scaleResolutionDownBy ≥ 1; 1024 leaves a 4K picture 4 pixels wide. */
  scaleResolutionDownBy: { min: 1, max: 1024 },
  /** Ids the relay gave out are UUIDs (36 characters); they never reach the engine, but are bounded too. */
  id: 128,
  /**
   * An id another relay hands in that becomes an id here (a pipe producer's `producerId`): it reaches
   * the engine, the logs, the events and the paths of later requests. mediasoup's ids are UUIDs (36
   * characters of hex digits and "-"); letters, digits, "-" and "_" up to 64 leave room for any
   * engine's or fork's form and nothing that needs escaping anywhere.
   */
  peerId: /^[A-Za-z0-9_-]{1,64}$/,
  /** DTLS fingerprints of one peer: browsers send one; mediasoup accepts five hash functions. */
  fingerprints: 8,
  /** appData: serialized size (UTF-8 bytes of its JSON) and nesting (the object itself is level 1). */
  appDataBytes: 4096,
  appDataDepth: 3,
} as const;

const utf8 = new TextEncoder();

/**
 * `appData`: a JSON object of at most BOUNDS.appDataBytes serialized and BOUNDS.appDataDepth levels.
 * The engine keeps it with the resource (mediasoup copies it), so its size is what the relay holds.
 */
export const appDataSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const deep = tooDeepAt(value, BOUNDS.appDataDepth);
    if (deep !== undefined) {
      ctx.addIssue({ code: 'custom', path: deep, message: `nests deeper than ${BOUNDS.appDataDepth} levels` });
      return;
    }
    const bytes = utf8.encode(JSON.stringify(value)).length;
    if (bytes > BOUNDS.appDataBytes) ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes as JSON; at most ${BOUNDS.appDataBytes}` });
  })
  .meta({ description: `A JSON object kept with the resource: at most ${BOUNDS.appDataBytes} bytes as JSON, nested at most ${BOUNDS.appDataDepth} levels.` });
