// The resource kinds as the machinery sees them: types read from the kinds table's types (KindTable,
// which each family's row.ts fills), and the few lists read from the table's value, which the registry
// is given (kinds/index.ts holds it; importing it here would close a cycle through the families' ops).
import type { KindTable } from '../kinds/row.js';

export * from './entries.js';
export type { CloseReason, KindRow, KindTable } from '../kinds/row.js';

export type ResourceKind = Extract<keyof KindTable, string>;
export type KindPlural = KindTable[ResourceKind]['plural'];

/**
 * The registry entry of each kind (its row's). An entry holds its mediasoup object under the kind's
 * name, the worker it lives on, and the id of each parent as `<parent>Id`; every entry but a router's
 * names its router (the room) as `routerId`.
 */
export type EntryOf = { [K in ResourceKind]: Exclude<KindTable[K]['entry'], undefined> };

/** The kinds producers and consumers are made on (their `transportId`): a WebRTC transport, and those whose row says so. */
export type MediaCarrierKind = { [K in ResourceKind]: KindTable[K] extends { carriesMedia: true } ? K : never }[ResourceKind];

/** The kinds a router's caps count (their row names the setting). */
export type RoomKind = { [K in ResourceKind]: KindTable[K] extends { roomCap: string } ? K : never }[ResourceKind];

/** The kinds that add their list to a router's state (their rows' `roomState`). */
export type RoomStateKind = { [K in ResourceKind]: KindTable[K] extends { roomState: object } ? K : never }[ResourceKind];

export type RegistryCounts = Record<KindPlural, number>;

/** Every kind of `table` in its order (parents before children): the order of counts and metrics. */
export function kindsOf(table: KindTable): [ResourceKind, ...ResourceKind[]] {
  return Object.keys(table) as [ResourceKind, ...ResourceKind[]];
}

/** The plural names of `table` in its order, ready for a `z.enum` or an object of counts. */
export function pluralsOf(table: KindTable): [KindPlural, ...KindPlural[]] {
  return kindsOf(table).map((kind) => table[kind].plural) as [KindPlural, ...KindPlural[]];
}

/** The kinds of `table` with a `roomState` (they add their list to a router's state), in its order. */
export function roomStateKindsOf(table: KindTable): RoomStateKind[] {
  return kindsOf(table).filter((kind): kind is RoomStateKind => 'roomState' in table[kind]);
}
