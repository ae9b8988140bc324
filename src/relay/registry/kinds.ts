// The resource kinds as the registry sees them: the table of kinds (kinds/resources.ts, made of each
// family's rows) and the entry of each kind, read from its row.
import { KINDS } from '../kinds/resources.js';

export * from './entries.js';
export { KINDS } from '../kinds/resources.js';
export type { CloseReason, KindRow } from '../kinds/row.js';

type Kinds = typeof KINDS;
export type ResourceKind = keyof Kinds;
export type KindPlural = Kinds[ResourceKind]['plural'];

/** Every kind in table order (parents before children): the order of counts and metrics. */
export const RESOURCE_KINDS = Object.keys(KINDS) as [ResourceKind, ...ResourceKind[]];

/** The plural names in table order, ready for a `z.enum` or an object of counts. */
export const KIND_PLURALS = RESOURCE_KINDS.map((kind) => KINDS[kind].plural) as [KindPlural, ...KindPlural[]];

/**
 * The registry entry of each kind (its row's). An entry holds its mediasoup object under the kind's
 * name, the worker it lives on, and the id of each parent as `<parent>Id`; every entry but a router's
 * names its router (the room) as `routerId`.
 */
export type EntryOf = { [K in ResourceKind]: Exclude<Kinds[K]['entry'], undefined> };

/** The kinds producers and consumers are made on (their `transportId`): a WebRTC transport, and those whose row says so. */
export type MediaCarrierKind = { [K in ResourceKind]: Kinds[K] extends { carriesMedia: true } ? K : never }[ResourceKind];

/** The kinds a router's caps count (their row names the setting). */
export type RoomKind = { [K in ResourceKind]: Kinds[K] extends { roomCap: string } ? K : never }[ResourceKind];

export type RegistryCounts = Record<KindPlural, number>;
