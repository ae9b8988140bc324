// The registry's entries of the kinds every room has (routers, WebRTC transports, producers,
// consumers, data producers and consumers): what the relay keeps of each mediasoup object it hands
// out. A kind of its own folder (kinds/<family>/row.ts) may define its entry there instead.
import type { types as ms } from 'mediasoup';
import type { RouterMediaCodec } from '../engine/codecs.js';

export type Direction = 'send' | 'recv';

/** What the registry needs of any mediasoup object it holds. */
export interface EngineResource {
  readonly id: string;
  readonly closed: boolean;
  readonly observer: { once(event: 'close', listener: () => void): unknown };
  close(): void;
}

/** One mediasoup router of a room, on one worker (src/relay/rooms/). */
export interface RoomPart {
  readonly router: ms.Router;
  readonly worker: ms.Worker;
  readonly slot: number;
}

/**
 * A producer's copy on another worker of its room (Router.pipeToRouter keeps its id there). Internal:
 * never a registry resource, never an event; kept while a consumer on that worker or a lease needs it.
 */
export interface PipedCopy {
  readonly producerId: string;
  readonly kind: 'producer' | 'dataProducer';
  readonly target: RoomPart;
  /** Leases taken and not yet released (a consumer being created, a speaker observer, a relay pipe). */
  holds: number;
  /** Settles once the copy exists on the target; rejects when it could not be made. */
  readonly ready: Promise<void>;
  /** The pipe consumer on the producer's worker: closing it closes the copy (mediasoup links them). */
  pipeConsumer: { readonly id: string; readonly closed: boolean; close(): void } | undefined;
  /** The copy itself (a Producer or DataProducer on the target's router). */
  pipeProducer: { readonly closed: boolean; pause?(): Promise<void>; resume?(): Promise<void> } | undefined;
}

/**
 * A room. `router` is its first mediasoup router, whose id names the room (and whose rtpCapabilities
 * and appData every part shares); `parts` are its routers, one per worker that holds some of it.
 */
export interface RouterEntry {
  readonly router: ms.Router;
  /** The worker of the room's oldest live part: where the registry indexes the room. */
  worker: ms.Worker;
  slot: number;
  /** The codecs every part is created with, so that the rtpCapabilities handed out fit every part. */
  readonly mediaCodecs: RouterMediaCodec[];
  readonly parts: Map<ms.Worker, RoomPart>;
  /** producerId (or dataProducerId) → worker of the copy → the copy. */
  readonly pipes: Map<string, Map<ms.Worker, PipedCopy>>;
  /** When the relay registered it: GET /v1/routers tells a restarted signaling server. */
  readonly createdAt: Date;
  /** The room's speaker observers (POST /routers speakerDetection), closed with the router by the engine. */
  speakers?: { activeSpeaker?: ms.ActiveSpeakerObserver; audioLevels?: ms.AudioLevelObserver };
  /**
   * Set on this node's part of a room whose first router is on another cluster node (src/relay/cluster/span.ts):
   * the room's id (its entry is registered under it, not under its own router's id) and that node. Such a
   * part publishes no router events, is not listed, and calls about the room are the origin's.
   */
  readonly origin?: {
    readonly roomId: string;
    readonly nodeId: string;
    /** The room detects speakers on its origin: this part's audio producers join its observers there. */
    readonly speakers?: boolean;
  };
}

/** The id of the room an entry stands for: its first router's, or the origin's for a part of another node's room. */
export function roomIdOf(entry: RouterEntry): string {
  return entry.origin?.roomId ?? entry.router.id;
}

export interface TransportEntry {
  readonly transport: ms.WebRtcTransport;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly direction: Direction;
  /** Set before the engine's connect() runs, reverted if it fails: a second connect is refused. */
  connected: boolean;
  /**
   * On a router that is no part of the room (a WHEP session's, whose codecs carry the player's payload
   * types): the session feeds its consumers; the API refuses to consume on it.
   */
  readonly outsideRoom?: true;
}

export interface ProducerEntry {
  readonly producer: ms.Producer;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly transportId: string;
}

export interface ConsumerEntry {
  readonly consumer: ms.Consumer;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly transportId: string;
  readonly producerId: string;
}

export interface DataProducerEntry {
  readonly dataProducer: ms.DataProducer;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly transportId: string;
}

export interface DataConsumerEntry {
  readonly dataConsumer: ms.DataConsumer;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly transportId: string;
  readonly dataProducerId: string;
}
