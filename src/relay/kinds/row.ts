// What a resource kind's row says (kinds/<family>/row.ts), read by the machinery every kind shares:
// the registry (maps, indexes, counts), the event bridge (close events and their reasons), the caps,
// the rooms and the ports a worker has left. None of that machinery names a kind; it reads these rows.
import type { Config } from '../../config/index.js';
import type { RelayEventInput } from '../contract/events.js';
import type { RoomState } from '../contract/room-state.js';

/**
 * Why a resource closed, nearest cause first: `api`/`shutdown` as recorded by the op that closed it,
 * `<parent>_closed` when a parent (in the kinds table's order) was closing, else what its worker did.
 */
export type CloseReason = 'api' | 'shutdown' | 'worker_died' | 'node_lost' | `${string}_closed`;

/** A media setting that caps how many of a kind one router holds (MEDIASOUP_MAX_*_PER_ROUTER). */
export type RoomCapSetting = {
  [K in keyof Config['media']]: K extends `max${string}PerRouter` ? (Config['media'][K] extends number ? K : never) : never;
}[keyof Config['media']];

export interface KindRow<Entry = unknown, Kind extends string = string> {
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
  /** The event the bridge publishes when one closes, with the reason it found. */
  closed(entry: Entry, reason: CloseReason): RelayEventInput;
  /** What it tells besides its close (its observer's other events). It only publishes: it never changes the registry. */
  watch?(entry: Entry, publish: (input: RelayEventInput) => void): void;
  /** The setting that caps how many one router holds; none: the kind is not capped per router. */
  readonly roomCap?: RoomCapSetting;
  /** Ports of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers that one takes; none: it takes none. */
  ports?(entry: Entry): number;
  /** Its list in a router's state (GET /v1/routers/{id}), under its plural: a kind that stands for a transport. */
  readonly roomState?: RoomState<Entry>;
  /** Producers and consumers are made on it by the ordinary producer and consumer ops (their `transportId`). */
  readonly carriesMedia?: true;
  /** The entry's type (never set: read by the registry's types). */
  readonly entry?: Entry;
}

/**
 * The kinds table as the types see it: each family's row.ts adds its kinds here by declaration merging
 * (`declare module '../row.js' { interface KindTable { ... } }`). The machinery's types (ResourceKind,
 * EntryOf, ...) read it instead of importing the table's value (kinds/index.ts), which imports the
 * families whose ops use that machinery; the value is checked against it there.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the families' declarations
export interface KindTable {}

/**
 * A family's resource kinds, each checked against the row's shape with its entry type.
 * @example
 * export const PLAIN_KINDS = { plainTransport: kindRow<PlainTransportEntry>()({ name: 'plainTransport', ... }) }
 * declare module '../row.js' { interface KindTable { plainTransport: (typeof PLAIN_KINDS)['plainTransport'] } }
 */
export function kindRow<Entry>() {
  return <const R extends Omit<KindRow<Entry>, 'entry'>>(row: R): R & { readonly entry?: Entry } => row;
}
