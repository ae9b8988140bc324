// The one table of resource kinds the relay hands out, in order (parents before children), made of
// each family's rows (kinds/<family>/row.ts). Everything that lists kinds reads it: the registry's
// maps and indexes, NOT_FOUND's `details.resource`, the counts of /internal/info, the `kind` label of
// the media_resources metric, the close events, the per-router caps and the OpenAPI document.
import { CONSUMER_KINDS } from './consumers/row.js';
import { DATA_KINDS } from './data/row.js';
import { PIPE_KINDS } from './pipes/row.js';
import { PLAIN_KINDS } from './plain/row.js';
import { PRODUCER_KINDS } from './producers/row.js';
import { ROUTER_KINDS } from './routers/row.js';
import { TRANSPORT_KINDS } from './transports/row.js';

/** Checks that every kind a row names (parents, closeWith, standsFor) is a kind of the table. */
function defineKinds<
  const T extends {
    [K in keyof T]: { readonly parents: readonly Extract<keyof T, string>[]; readonly closeWith: readonly Extract<keyof T, string>[]; readonly standsFor?: Extract<keyof T, string> };
  },
>(kinds: T): T {
  return kinds;
}

export const KINDS = defineKinds({
  ...ROUTER_KINDS,
  ...TRANSPORT_KINDS,
  ...PRODUCER_KINDS,
  ...CONSUMER_KINDS,
  ...DATA_KINDS,
  ...PIPE_KINDS,
  ...PLAIN_KINDS,
});

type Kinds = typeof KINDS;

/** The kinds that add their list to a router's state (their rows' `roomState`), in table order. */
export type RoomStateKind = { [K in keyof Kinds]: Kinds[K] extends { roomState: object } ? K : never }[keyof Kinds];
export const ROOM_STATE_KINDS = (Object.keys(KINDS) as (keyof Kinds)[]).filter((kind): kind is RoomStateKind => 'roomState' in KINDS[kind]);
