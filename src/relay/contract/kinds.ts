// The one table of resource kinds the relay hands out. Everything that lists kinds reads it: the
// registry's maps and indexes, NOT_FOUND's `details.resource`, the counts of /internal/info, the `kind`
// label of the media_resources metric and the OpenAPI document. A new kind is a new row here.

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
   * pipe or plain transport carries producers and consumers under their `transportId`, as a WebRTC one does.
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
  plainTransport: { name: 'plainTransport', plural: 'plainTransports', parents: ['router'], closeWith: [], standsFor: 'transport' },
});

export type ResourceKind = keyof typeof KINDS;
export type KindPlural = (typeof KINDS)[ResourceKind]['plural'];

/** Every kind in table order (parents before children): the order of counts and metrics. */
export const RESOURCE_KINDS = Object.keys(KINDS) as [ResourceKind, ...ResourceKind[]];

/** The plural names in table order, ready for a `z.enum` or an object of counts. */
export const KIND_PLURALS = RESOURCE_KINDS.map((kind) => KINDS[kind].plural) as [KindPlural, ...KindPlural[]];
