// What a router's state (GET /v1/routers/{id}) tells of the producers and consumers on a transport,
// whichever kind of transport; the kinds that stand for a transport (their rows' `roomState`) add
// their own list to it, each under its plural.
import { z } from 'zod';
import { appDataView } from './common.js';

export const producerStateSchema = z.object({ id: z.string(), kind: z.enum(['audio', 'video']), paused: z.boolean(), appData: appDataView });

export const consumerReconcileSchema = z.object({
  id: z.string(),
  producerId: z.string(),
  paused: z.boolean(),
  producerPaused: z.boolean(),
  appData: appDataView,
});

/** A kind's part of a router's state: the schema of its list and the view of one of its entries. */
export interface RoomState<Entry, Schema extends z.ZodArray = z.ZodArray> {
  readonly schema: Schema;
  view(entry: Entry, producers: z.output<typeof producerStateSchema>[], consumers: z.output<typeof consumerReconcileSchema>[]): z.output<Schema>[number];
}

type StateKindOf<T> = { [K in keyof T]: T[K] extends { roomState: RoomState<never> } ? K : never }[keyof T];

/** The shape the kinds of the table `T` with a `roomState` add to a router's state. */
export type RoomStateShape<T> = {
  [K in StateKindOf<T> as T[K] extends { plural: infer P extends string } ? P : never]: T[K] extends { roomState: RoomState<never, infer S> } ? S : never;
};
