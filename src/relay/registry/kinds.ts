// The one table of resource kinds the relay hands out. Everything that lists kinds reads it: the
// registry's maps and indexes, NOT_FOUND's `details.resource`, the counts of /internal/info, the `kind`
// label of the media_resources metric and the OpenAPI document. A new kind is a new row here.
import type { types as ms } from 'mediasoup';
import type { RouterMediaCodec } from '../engine/codecs.js';

export interface KindRow<Kind extends string = string> {
  /** Singular name: NOT_FOUND's `details.resource`, and the field of an entry holding the mediasoup object. */
  readonly name: string;
  /** Key in the counts of /internal/info and `kind` label of the media_resources metric. */
  readonly plural: string;
  /** Kinds whose id an entry keeps as `<parent>Id`; the registry indexes children by each of them. */
  readonly parents: readonly Kind[];
  /**
   * Parents whose close the registry turns into closing this resource at once: mediasoup reports
   * such closes later (and not at all once the worker's channel is gone), the registry must be exact now.
   */
  readonly closeWith: readonly Kind[];
  /**
   * A parent kind whose `<parent>Id` field in a child may name an entry of this kind instead: a
   * pipe transport carries producers and consumers under their `transportId`, as a WebRTC one does.
   */
  readonly standsFor?: Kind;
}

/** Checks that every parent named in a row is a kind of the table. */
function defineKinds<const T extends { [K in keyof T]: KindRow<Extract<keyof T, string>> }>(kinds: T): T {
  return kinds;
}

export const KINDS = defineKinds({
  router: { name: 'router', plural: 'routers', parents: [], closeWith: [] },
  transport: { name: 'transport', plural: 'transports', parents: ['router'], closeWith: [] },
  producer: { name: 'producer', plural: 'producers', parents: ['transport'], closeWith: [] },
  consumer: { name: 'consumer', plural: 'consumers', parents: ['transport', 'producer'], closeWith: ['producer'] },
  dataProducer: { name: 'dataProducer', plural: 'dataProducers', parents: ['transport'], closeWith: [] },
  dataConsumer: { name: 'dataConsumer', plural: 'dataConsumers', parents: ['transport', 'dataProducer'], closeWith: ['dataProducer'] },
  pipeTransport: { name: 'pipeTransport', plural: 'pipeTransports', parents: ['router'], closeWith: [], standsFor: 'transport' },
});

export type ResourceKind = keyof typeof KINDS;
export type KindPlural = (typeof KINDS)[ResourceKind]['plural'];

/** Every kind in table order (parents before children): the order of counts and metrics. */
export const RESOURCE_KINDS = Object.keys(KINDS) as [ResourceKind, ...ResourceKind[]];

/** The plural names in table order, ready for a `z.enum` or an object of counts. */
export const KIND_PLURALS = RESOURCE_KINDS.map((kind) => KINDS[kind].plural) as [KindPlural, ...KindPlural[]];

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
}

export interface TransportEntry {
  readonly transport: ms.WebRtcTransport;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly direction: Direction;
  /** Set before the engine's connect() runs, reverted if it fails: a second connect is refused. */
  connected: boolean;
}

/** A transport to another relay (src/relay/ops/pipes.ts); its producers and consumers name it as `transportId`. */
export interface PipeTransportEntry {
  readonly pipeTransport: ms.PipeTransport;
  readonly worker: ms.Worker;
  readonly routerId: string;
  /** The family of the address it listens on: a connect must name the other relay's address of it. */
  readonly listenFamily: 4 | 6;
  /** Set before the engine's connect() runs, reverted if it fails: a second connect is refused. */
  connected: boolean;
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

/**
 * The registry entry of each kind. An entry holds its mediasoup object under the kind's name, the
 * worker it lives on, and the id of each parent as `<parent>Id`; every entry but a router's names its
 * router (the room) as `routerId`.
 */
export interface EntryOf {
  router: RouterEntry;
  transport: TransportEntry;
  producer: ProducerEntry;
  consumer: ConsumerEntry;
  dataProducer: DataProducerEntry;
  dataConsumer: DataConsumerEntry;
  pipeTransport: PipeTransportEntry;
}

export type RegistryCounts = Record<KindPlural, number>;
