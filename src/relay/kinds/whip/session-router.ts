// The mediasoup router a WHEP session's transport is on, whose codecs carry the payload types of the
// player's offer. A consumer sends with its router's payload types, and a browser drops RTP whose
// payload type its offer did not give that codec; a router created with `preferredPayloadType` = the
// offer's type makes the consumers on it send with the offer's types. The sessions of one endpoint
// whose offers give the same types share one such router (players of one browser all do), made on
// the first one's start and closed with the last one's end. The room's producers reach it through
// one pair of PipeTransports per room part (two ports of RTC_MIN_PORT-RTC_MAX_PORT), each producer
// copied once (consumed on the room's side, produced on this one's). Router.pipeToRouter is not used:
// its copy keeps the producer's id, which mediasoup 3.11 refuses on a second router of one worker; a
// copy made by PipeTransport.produce() gets an id of its own.
import type { types as ms } from 'mediasoup';
import { RelayError } from '../../errors.js';
import { workerPorts, type OpsDeps } from '../../ops/deps.js';
import type { ProducerEntry, RoomPart, RouterEntry } from '../../registry/kinds.js';
import type { RouterMediaCodec } from '../../engine/codecs.js';
import { placeTransport } from '../../rooms/rooms.js';
import type { OfferedCodec, SectionPlan } from './sdp.js';
import { WhipRefusal } from './refusal.js';

const NOT_MEDIA = /\/(rtx|red|ulpfec|flexfec-03)$/i;

/** Media codecs per kind a session's router takes (mediasoup gives each video codec an RTX type from 32 dynamic ones). */
const CODECS_PER_KIND = 8;

/** The router codecs of an offer: every media codec its taken sections offer that the room carries, with the offer's payload type. */
export function offeredRouterCodecs(plans: readonly SectionPlan[]): RouterMediaCodec[] {
  const byPayloadType = new Map<number, OfferedCodec>();
  for (const plan of plans) {
    for (const codec of plan.offered) if (!NOT_MEDIA.test(codec.mimeType) && !byPayloadType.has(codec.payloadType)) byPayloadType.set(codec.payloadType, codec);
  }
  const counted = { audio: 0, video: 0 } as Record<string, number>;
  const taken = [...byPayloadType.values()].filter((codec) => {
    const kind = codec.mimeType.split('/')[0]!.toLowerCase();
    counted[kind] = (counted[kind] ?? 0) + 1;
    return counted[kind] <= CODECS_PER_KIND;
  });
  return taken.map((codec) => ({
    kind: codec.mimeType.split('/')[0] as ms.MediaKind,
    mimeType: codec.mimeType,
    clockRate: codec.clockRate,
    ...(codec.channels === undefined ? {} : { channels: codec.channels }),
    preferredPayloadType: codec.payloadType,
    parameters: { ...codec.parameters },
  }));
}

/** A PipeTransport on a room part (`local`) connected to one on the session's router (`remote`). */
interface PipePair {
  readonly local: ms.PipeTransport;
  readonly remote: ms.PipeTransport;
}

/** A room producer's copy on the session's router. */
interface Copy {
  readonly producer: ms.Producer;
  readonly pipeConsumer: ms.Consumer;
}

/** A router shared by the sessions of one endpoint whose offers map the codecs alike, and how many hold it. */
export interface SharedSessionRouter {
  readonly ready: Promise<SessionRouter>;
  /** Once ready: for the ports its pipes hold (workerPorts reads them through the endpoint's row). */
  router?: SessionRouter;
  claims: number;
}

/** Per endpoint: the codecs' key → the router of the sessions whose offers give those types. */
export type SessionRouters = Map<string, SharedSessionRouter>;

export class SessionRouter {
  /** Room part router → the pair of PipeTransports between it and this router (made once). */
  private readonly pipes = new Map<ms.Router, Promise<PipePair>>();
  private readonly pipeTransports: ms.PipeTransport[] = [];
  /** Room producer id → its copy's id here (made once, forgotten when the copy closes). */
  private readonly copies = new Map<string, Promise<string>>();

  /** Ports of RTC_MIN_PORT-RTC_MAX_PORT its open pipe transports hold, the room's side included (one each). */
  portsHeld(): number {
    return this.pipeTransports.filter((transport) => !transport.closed).length;
  }

  private constructor(
    private readonly deps: OpsDeps,
    private readonly room: RouterEntry,
    readonly router: ms.Router,
    readonly part: RoomPart,
  ) {
    // Whatever closes the router (the session, the worker) closes the room's side of the pipes too.
    router.observer.once('close', () => {
      for (const transport of this.pipeTransports) transport.close();
    });
  }

  /**
   * The router of `mediaCodecs` among `routers` (an endpoint's), made on the worker where a transport
   * of the room would go if there is none (or it closed, its worker gone); `release` it once.
   */
  static async claim(deps: OpsDeps, routers: SessionRouters, room: RouterEntry, mediaCodecs: RouterMediaCodec[]): Promise<{ router: SessionRouter; release: () => void }> {
    const key = JSON.stringify(mediaCodecs);
    let shared = routers.get(key);
    if (!shared) {
      const ready = SessionRouter.open(deps, room, mediaCodecs);
      const made: SharedSessionRouter = { ready, claims: 0 };
      routers.set(key, made);
      void ready.then(
        (router) => {
          made.router = router;
          router.router.observer.once('close', () => routers.get(key) === made && routers.delete(key));
        },
        () => routers.get(key) === made && routers.delete(key),
      );
      shared = made;
    }
    // Counted before the wait: a session ending meanwhile does not close the router under this one.
    const held = shared;
    held.claims += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.claims -= 1;
      if (held.claims > 0) return;
      if (routers.get(key) === held) routers.delete(key);
      void held.ready.then((r) => r.router.close(), () => {});
    };
    try {
      const router = await held.ready;
      if (router.router.closed) throw new RelayError('MEDIASOUP_ERROR', 'the media worker of the session closed');
      return { router, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  private static async open(deps: OpsDeps, room: RouterEntry, mediaCodecs: RouterMediaCodec[]): Promise<SessionRouter> {
    const roomId = room.router.id;
    const part = await placeTransport(deps, room);
    const router = await deps.engine('create router', () => part.worker.createRouter({ mediaCodecs, appData: { roomId, whep: true } }), [['router', roomId]], part.worker);
    return new SessionRouter(deps, room, router, part);
  }

  /**
   * The id of the room producer's copy on this router (consume that one here), made on the first call.
   * The copy closes with the producer and follows its pause and resume.
   */
  bring(entry: ProducerEntry): Promise<string> {
    const id = entry.producer.id;
    let pending = this.copies.get(id);
    if (!pending) {
      pending = this.copy(entry);
      this.copies.set(id, pending);
      void pending.catch(() => this.copies.get(id) === pending && this.copies.delete(id));
    }
    return pending;
  }

  private async copy(entry: ProducerEntry): Promise<string> {
    const { deps, room } = this;
    const source = room.parts.get(entry.worker);
    if (!source) throw new RelayError('MEDIASOUP_ERROR', `the producer's worker holds no part of room ${room.router.id}`);
    const pipe = await this.pipeFrom(source);
    const pipeConsumer = await deps.engine('pipe producer', () => pipe.local.consume({ producerId: entry.producer.id }), [['producer', entry.producer.id]], source.worker);
    let producer: ms.Producer;
    try {
      producer = await deps.engine(
        'pipe producer',
        () => pipe.remote.produce({ kind: pipeConsumer.kind, rtpParameters: pipeConsumer.rtpParameters, paused: pipeConsumer.producerPaused, appData: { copyOf: entry.producer.id } }),
        [['producer', entry.producer.id]],
        this.part.worker,
      );
    } catch (error) {
      pipeConsumer.close();
      throw error;
    }
    const copy: Copy = { producer, pipeConsumer };
    link(copy);
    producer.observer.once('close', () => this.copies.delete(entry.producer.id));
    if (pipeConsumer.closed || this.router.closed) {
      producer.close();
      throw new RelayError('NOT_FOUND', `producer not found: ${entry.producer.id}`, { resource: 'producer', id: entry.producer.id });
    }
    return producer.id;
  }

  private pipeFrom(source: RoomPart): Promise<PipePair> {
    let pending = this.pipes.get(source.router);
    if (!pending) {
      pending = this.connectPipe(source);
      this.pipes.set(source.router, pending);
      void pending.catch(() => this.pipes.get(source.router) === pending && this.pipes.delete(source.router));
    }
    return pending;
  }

  private async connectPipe(source: RoomPart): Promise<PipePair> {
    const { deps } = this;
    const roomId = this.room.router.id;
    // Two ports of those the WebRtcServers leave, counted with the pipe and plain transports' (the
    // endpoint's row): refused with the reason, before anything is made.
    const { ports, used } = workerPorts(deps);
    if (used + 2 > ports) throw new WhipRefusal(503, `no RTC port left for the session's pipe transports: ${used} of the ${ports} ports of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers are in use`);
    const local = await deps.engine('create pipe transport', () => source.router.createPipeTransport({ listenIp: '127.0.0.1' }), [['router', roomId]], source.worker);
    this.pipeTransports.push(local);
    if (this.router.closed) local.close();
    const remote = await deps.engine('create pipe transport', () => this.router.createPipeTransport({ listenIp: '127.0.0.1' }), [['router', roomId]], this.part.worker).catch((error: unknown) => {
      local.close();
      throw error;
    });
    this.pipeTransports.push(remote);
    local.observer.once('close', () => {
      remote.close();
      this.pipes.delete(source.router);
    });
    remote.observer.once('close', () => local.close());
    await deps.engine('connect pipe transport', () => local.connect({ ip: remote.tuple.localIp, port: remote.tuple.localPort }), [['router', roomId]], source.worker);
    await deps.engine('connect pipe transport', () => remote.connect({ ip: local.tuple.localIp, port: local.tuple.localPort }), [['router', roomId]], this.part.worker);
    return { local, remote };
  }
}

/** The copy follows its pipe consumer (the producer's close, pause, resume), and the other way for close. */
function link({ producer, pipeConsumer }: Copy): void {
  pipeConsumer.observer.once('close', () => producer.close());
  producer.observer.once('close', () => pipeConsumer.close());
  pipeConsumer.observer.on('pause', () => void producer.pause().catch(() => {}));
  pipeConsumer.observer.on('resume', () => void producer.resume().catch(() => {}));
}
