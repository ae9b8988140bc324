// The typed client's own vocabulary, a leaf with no import: the relay's wire types (request bodies as
// sent, answers and events as received), its options, and the client's shape. Declared here rather
// than derived from the relay's zod contract so that the package's declarations (dist/index.d.ts)
// need neither zod nor hono nor any server code; test/client/wire-types.test.ts checks at the type
// level that each one stays equal to the contract's z.input/z.output, so they cannot drift.

export type MediaKind = 'audio' | 'video';

/** A JSON object kept with a resource (at most 4096 bytes as JSON, nested at most 3 levels). */
export type AppData = Record<string, unknown>;

// --- RTP and transport parameters, as a request sends them (mediasoup-client's) ---

export interface RtcpFeedback {
  type: string;
  parameter?: string | undefined;
}

/** fmtp parameters: at most 32, short keys, short strings or int32 numbers. */
export type CodecParameters = Record<string, string | number>;

export interface RtpCodecParameters {
  mimeType: string;
  clockRate: number;
  payloadType: number;
  channels?: number | undefined;
  parameters?: CodecParameters | undefined;
  rtcpFeedback?: RtcpFeedback[] | undefined;
}

export interface RtpHeaderExtensionParameters {
  uri: string;
  id: number;
  encrypt?: boolean | undefined;
  parameters?: CodecParameters | undefined;
}

export type EncodingPriority = 'very-low' | 'low' | 'medium' | 'high';

export interface RtpEncodingParameters {
  ssrc?: number | undefined;
  rid?: string | undefined;
  codecPayloadType?: number | undefined;
  rtx?: { ssrc: number } | undefined;
  dtx?: boolean | undefined;
  scalabilityMode?: string | undefined;
  scaleResolutionDownBy?: number | undefined;
  maxBitrate?: number | undefined;
  maxFramerate?: number | undefined;
  adaptivePtime?: boolean | undefined;
  active?: boolean | undefined;
  priority?: EncodingPriority | undefined;
  networkPriority?: EncodingPriority | undefined;
}

export interface RtcpParameters {
  cname?: string | undefined;
  reducedSize?: boolean | undefined;
  mux?: boolean | undefined;
}

export interface RtpParameters {
  mid?: string | undefined;
  codecs: RtpCodecParameters[];
  headerExtensions?: RtpHeaderExtensionParameters[] | undefined;
  encodings?: RtpEncodingParameters[] | undefined;
  rtcp?: RtcpParameters | undefined;
  msid?: string | undefined;
}

/** Either payload type name is accepted (at least one of them). */
export interface RtpCodecCapability {
  kind?: MediaKind | undefined;
  mimeType: string;
  clockRate: number;
  payloadType?: number | undefined;
  preferredPayloadType?: number | undefined;
  channels?: number | undefined;
  parameters?: CodecParameters | undefined;
  rtcpFeedback?: RtcpFeedback[] | undefined;
}

export type HeaderExtensionDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface RtpHeaderExtensionCapability {
  kind?: MediaKind | undefined;
  uri: string;
  preferredId: number;
  preferredEncrypt?: boolean | undefined;
  direction?: HeaderExtensionDirection | undefined;
}

export interface RtpCapabilities {
  codecs: RtpCodecCapability[];
  headerExtensions?: RtpHeaderExtensionCapability[] | undefined;
}

/** A router's media codec (mediasoup's RtpCodecCapability). */
export interface MediaCodec {
  kind?: MediaKind | undefined;
  mimeType: string;
  clockRate: number;
  channels?: number | undefined;
  preferredPayloadType?: number | undefined;
  parameters?: CodecParameters | undefined;
  rtcpFeedback?: RtcpFeedback[] | undefined;
}

export type DtlsRole = 'auto' | 'client' | 'server';
export type FingerprintAlgorithm = 'sha-1' | 'sha-224' | 'sha-256' | 'sha-384' | 'sha-512';

export interface DtlsParameters {
  role?: DtlsRole | undefined;
  fingerprints: { algorithm: FingerprintAlgorithm; value: string }[];
}

export interface SpeakerDetection {
  activeSpeaker?: boolean | undefined;
  audioLevels?: { intervalMs: number; thresholdDb: number } | undefined;
}

export interface SctpStreamParameters {
  streamId: number;
  ordered?: boolean | undefined;
  maxPacketLifeTime?: number | null | undefined;
  maxRetransmits?: number | null | undefined;
}

export type SrtpCryptoSuite = 'AEAD_AES_256_GCM' | 'AEAD_AES_128_GCM' | 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32';

export interface SrtpParameters {
  cryptoSuite: SrtpCryptoSuite;
  keyBase64: string;
}

// --- Request bodies ---

export interface CreateRouterBody {
  mediaCodecs?: MediaCodec[] | undefined;
  appData?: AppData | undefined;
  speakerDetection?: SpeakerDetection | undefined;
}

export interface CreateTransportBody {
  routerId: string;
  direction: 'send' | 'recv';
  enableSctp?: boolean | undefined;
  appData?: AppData | undefined;
}

export interface CreateProducerBody {
  transportId: string;
  kind: MediaKind;
  rtpParameters: RtpParameters;
  paused?: boolean | undefined;
  appData?: AppData | undefined;
}

export interface CreateConsumerBody {
  transportId: string;
  producerId: string;
  rtpCapabilities: RtpCapabilities;
  appData?: AppData | undefined;
}

export interface PreferredLayersBody {
  spatialLayer: number;
  temporalLayer?: number | undefined;
}

export interface CreateDataProducerBody {
  transportId: string;
  sctpStreamParameters?: SctpStreamParameters | undefined;
  label?: string | undefined;
  protocol?: string | undefined;
  appData?: AppData | undefined;
}

export interface CreateDataConsumerBody {
  transportId: string;
  dataProducerId: string;
  appData?: AppData | undefined;
}

export interface CreatePipeTransportBody {
  routerId: string;
  /** SRTP between the relays; default true. */
  enableSrtp?: boolean | undefined;
  appData?: AppData | undefined;
}

export interface ConnectPipeTransportBody {
  /** The other relay's pipe transport ip, as its createPipeTransport answered. */
  ip: string;
  port: number;
  /** The other side's srtpParameters: required when this transport has SRTP, refused when it has not. */
  srtpParameters?: SrtpParameters | undefined;
}

export interface CreatePipeProducerBody {
  /** The producer's id on the relay it comes from (kept, so that ids agree across relays). */
  producerId: string;
  kind: MediaKind;
  /** The rtpParameters of the pipe consumer on the other relay. */
  rtpParameters: RtpParameters;
  paused?: boolean | undefined;
  appData?: AppData | undefined;
}

// --- Parameters as the relay answers them (the engine's, unknown members passed through) ---

export interface IceParameters {
  usernameFragment: string;
  password: string;
  iceLite?: boolean | undefined;
}

export interface DtlsParametersView {
  role?: DtlsRole | undefined;
  fingerprints: { algorithm: string; value: string }[];
}

export interface SctpParameters {
  port: number;
  OS: number;
  MIS: number;
  maxMessageSize: number;
}

export interface RtcpFeedbackView {
  type: string;
  parameter?: string | undefined;
}

export interface RtpCapabilitiesView {
  codecs?:
    | {
        kind: MediaKind;
        mimeType: string;
        preferredPayloadType?: number | undefined;
        clockRate: number;
        channels?: number | undefined;
        parameters?: Record<string, unknown> | undefined;
        rtcpFeedback?: RtcpFeedbackView[] | undefined;
      }[]
    | undefined;
  headerExtensions?:
    | {
        kind: MediaKind;
        uri: string;
        preferredId: number;
        preferredEncrypt?: boolean | undefined;
        direction?: HeaderExtensionDirection | undefined;
      }[]
    | undefined;
}

export interface RtpParametersView {
  mid?: string | undefined;
  codecs: {
    mimeType: string;
    payloadType: number;
    clockRate: number;
    channels?: number | undefined;
    parameters?: Record<string, unknown> | undefined;
    rtcpFeedback?: RtcpFeedbackView[] | undefined;
  }[];
  headerExtensions?: { uri: string; id: number; encrypt?: boolean | undefined; parameters?: Record<string, unknown> | undefined }[] | undefined;
  encodings?: { ssrc?: number | undefined; rid?: string | undefined; rtx?: { ssrc: number } | undefined }[] | undefined;
  rtcp?: { cname?: string | undefined; reducedSize?: boolean | undefined; mux?: boolean | undefined } | undefined;
  msid?: string | undefined;
}

export interface SctpStreamParametersView {
  streamId: number;
  ordered: boolean;
  maxPacketLifeTime?: number | undefined;
  maxRetransmits?: number | undefined;
}

// --- Answers ---

export interface Router {
  id: string;
  /** The same as id, for signaling servers that read this name. */
  routerId: string;
  rtpCapabilities: RtpCapabilitiesView;
}

export interface RoomCounts {
  transports: number;
  producers: number;
  consumers: number;
  dataProducers: number;
  dataConsumers: number;
}

export interface RouterSummary {
  id: string;
  appData: AppData;
  /** yyyy-MM-dd HH:mm:ss, Asia/Shanghai. */
  createdAt: string;
  /** pid of the worker of the room's oldest live part. */
  workerPid: number;
  /** pids of every worker holding part of the room, oldest first. */
  workerPids: number[];
  counts: RoomCounts;
}

export interface RouterList {
  routers: RouterSummary[];
}

export interface ProducerState {
  id: string;
  kind: MediaKind;
  paused: boolean;
  appData: AppData;
}

export interface ConsumerReconcileState {
  id: string;
  producerId: string;
  paused: boolean;
  producerPaused: boolean;
  appData: AppData;
}

export interface TransportState {
  id: string;
  direction: 'send' | 'recv';
  workerPid: number;
  connected: boolean;
  iceState: string;
  dtlsState: string;
  appData: AppData;
  producers: ProducerState[];
  consumers: ConsumerReconcileState[];
  /** On a send transport created with enableSctp. */
  dataProducers: DataProducerState[];
  /** On a recv transport created with enableSctp. */
  dataConsumers: DataConsumerState[];
}

export interface DataProducerState extends DataProducer {
  appData: AppData;
}

export interface DataConsumerState extends DataConsumer {
  appData: AppData;
}

export interface PipeTransportState {
  id: string;
  connected: boolean;
  appData: AppData;
  producers: ProducerState[];
  consumers: ConsumerReconcileState[];
}
export interface PlainTransportState {
  id: string;
  /** connect was called (and did not fail). */
  connected: boolean;
  comedia: boolean;
  rtcpMux: boolean;
  appData: AppData;
  /** RTP received from an ingest sender. */
  producers: ProducerState[];
  /** This room's producers sent out as plain RTP (recordings among them). */
  consumers: ConsumerReconcileState[];
}

/** GET /internal/v1/routers/{id}: a router and everything in it. */
export interface RouterState extends RouterSummary {
  rtpCapabilities: AppData;
  transports: TransportState[];
  pipeTransports: PipeTransportState[];
  plainTransports: PlainTransportState[];
}

export interface IceCandidate {
  foundation: string;
  priority: number;
  address: string;
  /** The same as address (mediasoup 3.11 name). */
  ip: string;
  protocol: 'udp' | 'tcp';
  port: number;
  type: string;
  tcpType?: string | undefined;
}

export interface Transport {
  id: string;
  routerId: string;
  direction: 'send' | 'recv';
  iceParameters: IceParameters;
  iceCandidates: IceCandidate[];
  dtlsParameters: DtlsParametersView;
  sctpParameters?: SctpParameters | undefined;
  /** Only when TURN is configured: TURN servers with a credential, for mediasoup-client's transport option of that name. */
  iceServers?: IceServer[] | undefined;
}

/** One RTCIceServer: TURN URLs with a short-lived credential in the TURN REST scheme. */
export interface IceServer {
  urls: string[];
  /** `<expiry unix seconds>:<user key>`. */
  username: string;
  credential: string;
}

export interface IceServersBody {
  /** The user key written into the username; absent: a random one. */
  userId?: string | number | undefined;
}

export interface IceServers {
  /** Empty when TURN is not configured. */
  iceServers: IceServer[];
  /** Seconds the credential stays valid; 0 when iceServers is empty. */
  expiresIn: number;
}

export interface Connected {
  id: string;
  connected: true;
}

export interface Producer {
  id: string;
  transportId: string;
  kind: MediaKind;
  type: string;
  paused: boolean;
}

export interface PausedState {
  id: string;
  paused: boolean;
}

export interface Consumer {
  id: string;
  transportId: string;
  producerId: string;
  kind: MediaKind;
  type: string;
  rtpParameters: RtpParametersView;
  /** true: a consumer is created paused. */
  paused: boolean;
  producerPaused: boolean;
}

export interface ConsumerState {
  id: string;
  paused: boolean;
  producerPaused: boolean;
}

export interface ConsumerLayers {
  id: string;
  preferredLayers: { spatialLayer: number; temporalLayer?: number | undefined } | null;
  currentLayers: { spatialLayer: number; temporalLayer?: number | undefined } | null;
}

export interface ConsumerPriority {
  id: string;
  priority: number;
}

export interface IceRestart {
  id: string;
  iceParameters: IceParameters;
}

/** The engine's stats, as it reports them (one object per stream). */
export type Stats = Record<string, unknown>[];

export interface DataProducer {
  id: string;
  transportId: string;
  sctpStreamParameters: SctpStreamParametersView | null;
  label: string;
  protocol: string;
}

export interface DataConsumer {
  id: string;
  transportId: string;
  dataProducerId: string;
  sctpStreamParameters: SctpStreamParametersView | null;
  label: string;
  protocol: string;
}

export interface CreatePlainTransportBody {
  routerId: string;
  /** true: learn where to send from the first packet received (an ingest sender behind NAT); no connect then. */
  comedia?: boolean | undefined;
  /** RTP and RTCP on one port; default true. */
  rtcpMux?: boolean | undefined;
  /** SRTP (AES_CM_128_HMAC_SHA1_80); default false. */
  enableSrtp?: boolean | undefined;
  appData?: AppData | undefined;
}
export interface ConnectPlainTransportBody {
  /** Where the transport sends RTP: a unicast address of its listen family. */
  ip: string;
  port: number;
  /** Only for a transport created with rtcpMux false. */
  rtcpPort?: number | undefined;
  srtpParameters?: SrtpParameters | undefined;
}
export interface PlainTransport {
  id: string;
  routerId: string;
  /** Where an RTP sender sends to. */
  ip: string;
  port: number;
  /** Present when the transport was created with rtcpMux false. */
  rtcpPort?: number | undefined;
  comedia: boolean;
  rtcpMux: boolean;
  srtpParameters?: SrtpParameters | undefined;
}
export type RecordingState = 'starting' | 'recording' | 'stopping' | 'stopped' | 'failed';
export type RecordingStopReason = 'api' | 'producer_closed' | 'router_closed' | 'max_duration' | 'shutdown';
export interface CreateRecordingBody {
  routerId: string;
  /** One audio and/or one video producer of the router (Opus; VP8, VP9 or H264). */
  producerIds: string[];
  appData?: AppData | undefined;
}
export interface Recording {
  id: string;
  routerId: string;
  producerIds: string[];
  state: RecordingState;
  startedAt: string;
  format: 'webm' | 'mkv' | 'ogg';
  /** The file's name in RECORDINGS_DIR. */
  file: string;
  appData: AppData;
  reason?: RecordingStopReason | undefined;
  error?: string | undefined;
  bytes?: number | undefined;
  durationMs?: number | undefined;
  /** With RECORDINGS_S3_BUCKET: the upload of the finished file. */
  upload?: 'pending' | 'uploaded' | 'failed' | undefined;
  /** The object's key in RECORDINGS_S3_BUCKET once uploaded. */
  key?: string | undefined;
}
export interface RecordingList {
  recordings: Recording[];
}

export interface PipeTransport {
  id: string;
  routerId: string;
  /** The address the other relay connects to. */
  ip: string;
  port: number;
  /** Present when SRTP is on: give it to the other side in its connect. */
  srtpParameters?: SrtpParameters | undefined;
}

export interface PipeConsumer {
  id: string;
  producerId: string;
  kind: MediaKind;
  /** Give it, as it is, to createPipeProducer on the other relay. */
  rtpParameters: RtpParametersView;
  paused: boolean;
  producerPaused: boolean;
}

export interface PipeProducer {
  id: string;
  kind: MediaKind;
  paused: boolean;
}

export interface ResourceCounts extends RoomCounts {
  routers: number;
  pipeTransports: number;
  plainTransports: number;
}

/** GET /internal/info. */
export interface RelayInfo {
  version: string;
  started_at: string;
  uptime_s: number;
  draining: boolean;
  workers: {
    pid: number | null;
    alive: boolean;
    restarts: number;
    deaths: number;
    routers: number;
    port: number;
    lastRestartDelayMs: number | null;
    counts: ResourceCounts;
    cpuMs: number | null;
  }[];
  counts: ResourceCounts;
  limits: {
    maxRouters: number;
    maxTransportsPerRouter: number;
    maxProducersPerRouter: number;
    maxConsumersPerRouter: number;
    rtcMinPort: number;
    rtcMaxPort: number;
  };
  largestRouter: { transports: number; producers: number; consumers: number };
  rate_limits: { store: 'memory' | 'redis' | 'memory-fallback' };
  events: {
    lastId: string;
    buffered: number;
    streams: number;
    webhook: { [key: string]: unknown; enabled: boolean };
  };
}

export interface DrainState {
  draining: true;
  routers: number;
}

// --- Errors ---

export type RelayErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'ROUTER_LIMIT_EXCEEDED'
  | 'DRAINING'
  | 'ROUTER_CAPACITY_EXCEEDED'
  | 'STREAM_LIMIT_EXCEEDED'
  | 'RECORDING_CAPACITY_EXCEEDED'
  | 'RECORDING_STORAGE_FULL'
  | 'CAN_NOT_CONSUME'
  | 'MEDIASOUP_ERROR'
  | 'INTERNAL_ERROR';

// --- Events (docs/events.md) ---

export type RouterCloseReason = 'api' | 'worker_died' | 'shutdown';
export type TransportCloseReason = 'api' | 'router_closed' | 'worker_died' | 'shutdown';
export type ProducerCloseReason = 'api' | 'transport_closed' | 'router_closed' | 'worker_died' | 'shutdown';
export type ConsumerCloseReason = 'api' | 'producer_closed' | 'transport_closed' | 'router_closed' | 'worker_died' | 'shutdown';
export type DataConsumerCloseReason = 'api' | 'data_producer_closed' | 'transport_closed' | 'router_closed' | 'worker_died' | 'shutdown';
export type PauseCause = 'api' | 'producer';
export type ResyncReason = 'unknown_id' | 'too_old' | 'other_process';
export type IceState = 'new' | 'connected' | 'completed' | 'disconnected' | 'closed';
export type DtlsState = 'new' | 'connecting' | 'connected' | 'failed' | 'closed';

interface EventBase<T extends string> {
  /** Opaque; strictly increasing within one relay process. */
  id: string;
  type: T;
  /** yyyy-MM-dd HH:mm:ss, Asia/Shanghai. */
  time: string;
}

interface OnRouter {
  routerId: string;
  /** The resource's appData as given at creation. */
  appData: AppData;
}

interface OnTransport extends OnRouter {
  transportId: string;
}

interface OnProducer extends OnTransport {
  producerId: string;
}

interface OnConsumer extends OnTransport {
  consumerId: string;
  producerId: string;
}

export interface WorkerDiedEvent extends EventBase<'worker.died'> {
  workerPid: number;
  routerIds: string[];
  restartInMs: number;
}
export interface WorkerRestartedEvent extends EventBase<'worker.restarted'> {
  workerPid: number;
}
export interface RouterClosedEvent extends EventBase<'router.closed'>, OnRouter {
  reason: RouterCloseReason;
}
export interface TransportClosedEvent extends EventBase<'transport.closed'>, OnTransport {
  reason: TransportCloseReason;
}
export interface TransportIceEvent extends EventBase<'transport.ice'>, OnTransport {
  state: IceState;
}
export interface TransportDtlsEvent extends EventBase<'transport.dtls'>, OnTransport {
  state: DtlsState;
}
export interface ProducerClosedEvent extends EventBase<'producer.closed'>, OnProducer {
  reason: ProducerCloseReason;
}
export interface ProducerPausedEvent extends EventBase<'producer.paused'>, OnProducer {}
export interface ProducerResumedEvent extends EventBase<'producer.resumed'>, OnProducer {}
export interface ProducerScoreEvent extends EventBase<'producer.score'>, OnProducer {
  score: { encodingIdx?: number | undefined; ssrc: number; rid?: string | undefined; score: number }[];
}
export interface ConsumerClosedEvent extends EventBase<'consumer.closed'>, OnConsumer {
  reason: ConsumerCloseReason;
}
export interface ConsumerPausedEvent extends EventBase<'consumer.paused'>, OnConsumer {
  by: PauseCause;
}
export interface ConsumerResumedEvent extends EventBase<'consumer.resumed'>, OnConsumer {
  by: PauseCause;
}
export interface ConsumerScoreEvent extends EventBase<'consumer.score'>, OnConsumer {
  score: { score: number; producerScore: number; producerScores: number[] };
}
export interface ConsumerLayersEvent extends EventBase<'consumer.layers'>, OnConsumer {
  spatialLayer: number | null;
  temporalLayer: number | null;
}
export interface DataProducerClosedEvent extends EventBase<'dataProducer.closed'>, OnTransport {
  dataProducerId: string;
  reason: ProducerCloseReason;
}
export interface DataConsumerClosedEvent extends EventBase<'dataConsumer.closed'>, OnTransport {
  dataConsumerId: string;
  dataProducerId: string;
  reason: DataConsumerCloseReason;
}
export interface PipeTransportClosedEvent extends EventBase<'pipeTransport.closed'>, OnRouter {
  pipeTransportId: string;
  reason: TransportCloseReason;
}
export interface PlainTransportClosedEvent extends EventBase<'plainTransport.closed'>, OnRouter {
  plainTransportId: string;
  reason: TransportCloseReason;
}
export interface RecordingStartedEvent extends EventBase<'recording.started'>, OnRouter {
  recordingId: string;
  producerIds: string[];
  appData: AppData;
}
export interface RecordingStoppedEvent extends EventBase<'recording.stopped'>, OnRouter {
  recordingId: string;
  reason: RecordingStopReason;
  file: string;
  bytes: number;
  durationMs: number;
  appData: AppData;
}
export interface RecordingUploadedEvent extends EventBase<'recording.uploaded'>, OnRouter {
  recordingId: string;
  key: string;
  bytes: number;
  appData: AppData;
}
export interface RecordingRecoveredEvent extends EventBase<'recording.recovered'>, OnRouter {
  recordingId: string;
  file: string;
  bytes: number;
  appData: AppData;
}
export interface RecordingFailedEvent extends EventBase<'recording.failed'>, OnRouter {
  recordingId: string;
  error: string;
  appData: AppData;
}
export interface ActiveSpeakerEvent extends EventBase<'router.activeSpeaker'>, OnRouter {
  producerId: string;
}
export interface AudioLevelsEvent extends EventBase<'router.audioLevels'> {
  routerId: string;
  /** dBov, -127..0, with the producer's appData. */
  volumes: { producerId: string; volume: number; appData: AppData }[];
}
export interface SilenceEvent extends EventBase<'router.silence'> {
  routerId: string;
}
export type RelayDrainingEvent = EventBase<'relay.draining'>;

/** Stream only, always first: events were missed. Reload state, then follow the stream. */
export interface ResyncEvent extends EventBase<'resync'> {
  reason: ResyncReason;
}

/** An event of the media relay (stream and webhook). */
export type RelayEvent =
  | WorkerDiedEvent
  | WorkerRestartedEvent
  | RouterClosedEvent
  | TransportClosedEvent
  | TransportIceEvent
  | TransportDtlsEvent
  | ProducerClosedEvent
  | ProducerPausedEvent
  | ProducerResumedEvent
  | ProducerScoreEvent
  | ConsumerClosedEvent
  | ConsumerPausedEvent
  | ConsumerResumedEvent
  | ConsumerScoreEvent
  | ConsumerLayersEvent
  | DataProducerClosedEvent
  | DataConsumerClosedEvent
  | PipeTransportClosedEvent
  | PlainTransportClosedEvent
  | ActiveSpeakerEvent
  | AudioLevelsEvent
  | SilenceEvent
  | RecordingStartedEvent
  | RecordingStoppedEvent
  | RecordingUploadedEvent
  | RecordingRecoveredEvent
  | RecordingFailedEvent
  | RelayDrainingEvent;

export type RelayEventType = RelayEvent['type'];

/** What the event stream yields: every relay event, and resync. */
export type RelayStreamEvent = RelayEvent | ResyncEvent;

/** A webhook delivery: a batch of events in order, signed as a whole. */
export interface WebhookBatch {
  /** Unix seconds when this delivery attempt was signed. */
  timestamp: number;
  /** Events dropped (queue overflow) since the previous batch; > 0 means reload state. */
  dropped: number;
  events: RelayEvent[];
}

// --- The client ---

export interface RelayClientOptions {
  /** Origin of the relay service, e.g. `http://relay.internal:3001` (the `/internal` prefix is added here). */
  baseUrl: string;
  /** The relay's INTERNAL_TOKEN, sent as X-Internal-Token on every request. */
  token: string;
  /** A fetch to use instead of the global one, e.g. `app.request` in tests. */
  fetch?: typeof fetch | ((input: string | URL | Request, init?: RequestInit) => Response | Promise<Response>);
}

/** What piping a producer between two relays asks of each relay's client (createRelayClient gives all of it). */
export interface PipeRelay {
  createPipeTransport(body: CreatePipeTransportBody): Promise<PipeTransport>;
  connectPipeTransport(id: string, body: ConnectPipeTransportBody): Promise<Connected>;
  createPipeConsumer(id: string, producerId: string): Promise<PipeConsumer>;
  createPipeProducer(id: string, body: CreatePipeProducerBody): Promise<PipeProducer>;
  closePipeTransport(id: string): Promise<void>;
  closeConsumer(id: string): Promise<void>;
  closeProducer(id: string): Promise<void>;
  pauseProducer(id: string): Promise<PausedState>;
  resumeProducer(id: string): Promise<PausedState>;
}

// --- The account area on the internal surface: introspection and moderation (src/accounts/contract) ---

/** RFC 7662's answer: whose an active access token is, or `{active: false}` for any other token. */
export type Introspection =
  | {
      active: true;
      /** The user id. */
      sub: string;
      /** The session's public id. */
      sid: string;
      username: string;
      roles: string[];
      /** Unix time, seconds. */
      exp: number;
      iat: number;
      iss: string;
      aud: string;
      token_type: 'access_token';
    }
  | { active: false };

export interface BanBody {
  /** When the ban ends, yyyy-MM-dd HH:mm:ss (Asia/Shanghai), in the future; absent: until lifted. */
  until?: string | undefined;
  /** For operators; never shown to the user. */
  reason?: string | undefined;
}

export interface OperatorUser {
  id: number;
  username: string;
  email: string;
  /** The address was proved by a mailed code. */
  email_verified: boolean;
  nickname: string;
  roles: string[];
  created_at: string;
  /** The ban in force; null when the user is not banned. */
  ban: { since: string; until: string | null; reason: string | null } | null;
}

export interface OperatorUserDetail extends OperatorUser {
  /** Live sessions. */
  sessions: number;
}

/** What DELETE /internal/v1/users/:id/mfa removed. */
export interface MfaCleared {
  user_id: number;
  passkeys_removed: number;
  totp_removed: boolean;
}

export interface UsersPage {
  users: OperatorUser[];
  next_cursor: string | null;
}

/** Why a session ended. */
export type SessionEndReason = 'logout' | 'revoked' | 'password_changed' | 'password_reset' | 'reuse_detected' | 'account_deleted' | 'banned' | 'email_changed';

export interface SessionEndedEvent extends EventBase<'auth.session.ended'> {
  userId: number;
  /** The session's public id (the `sid` of its access tokens). */
  sessionId: string;
  reason: SessionEndReason;
}
export interface UserDeletedEvent extends EventBase<'auth.user.deleted'> {
  userId: number;
}
export interface UserBannedEvent extends EventBase<'auth.user.banned'> {
  userId: number;
  until: string | null;
  reason: string | null;
}
export interface UserUnbannedEvent extends EventBase<'auth.user.unbanned'> {
  userId: number;
}
export interface UserMfaClearedEvent extends EventBase<'auth.user.mfa_cleared'> {
  userId: number;
  /** Passkeys removed. */
  passkeys: number;
  /** Whether an enabled TOTP factor was removed. */
  totp: boolean;
}
/** An event of the account area (stream and webhook); it concerns no router. */
export type AccountEvent = SessionEndedEvent | UserDeletedEvent | UserBannedEvent | UserUnbannedEvent | UserMfaClearedEvent;
export type AccountEventType = AccountEvent['type'];
