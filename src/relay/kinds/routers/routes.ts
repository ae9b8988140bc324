// Routers (rooms): the contract's routes (contract.ts) -> ops -> views.
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import { formatTime } from '../../../time.js';
import { closeRouter, createRouter, listRouters, routerSchema, routerSummarySchema, type consumerReconcileSchema, type producerStateSchema, type RoomStateContract } from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import type { RouterState, RouterSummary } from './ops.js';
import { roomIdOf, roomStateKindsOf, type ConsumerEntry, type KindTable, type ProducerEntry } from '../../registry/kinds.js';
import { dataConsumerView, dataProducerView } from '../data/routes.js';
import { relayRouter, withJsonBody } from '../../http/router.js';
import type { RoomStateShape } from '../../contract/room-state.js';

/** `state`: GET /v1/routers/{id} as made from the kinds table (`kinds`), whose rows give the views of its lists. */
export function routersRoutes(media: FamilyMedia<typeof ops>, state: RoomStateContract, kinds: KindTable) {
  const { getRouter } = state;
  return relayRouter()
    .openapi(withJsonBody(createRouter), async (c) => {
      const router = await media.forRequest(c.get('requestId')).createRouter(c.req.valid('json'));
      return c.json(routerView(router), 201);
    })
    .openapi(listRouters, (c) => c.json({ routers: media.listRouters().map(routerSummaryView) }, 200))
    .openapi(getRouter, (c) => c.json(routerStateView(kinds, media.getRouter(c.req.valid('param').id)), 200))
    .openapi(closeRouter, (c) => {
      media.closeRouter(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

/** The id twice: `routerId` is the field a signaling server written in Go reads (docs/media-relay.md). */
export function routerView(router: ms.Router): z.output<typeof routerSchema> {
  return { id: router.id, routerId: router.id, rtpCapabilities: router.rtpCapabilities };
}

export function routerSummaryView({ entry, counts }: RouterSummary): z.output<typeof routerSummarySchema> {
  return {
    id: roomIdOf(entry),
    appData: entry.router.appData,
    createdAt: formatTime(entry.createdAt),
    workerPid: entry.worker.pid,
    workerPids: [...entry.parts.keys()].map((worker) => worker.pid),
    counts: {
      transports: counts.transports,
      producers: counts.producers,
      consumers: counts.consumers,
      dataProducers: counts.dataProducers,
      dataConsumers: counts.dataConsumers,
    },
  };
}

function producerStateView({ producer }: ProducerEntry): z.output<typeof producerStateSchema> {
  return { id: producer.id, kind: producer.kind, paused: producer.paused, appData: producer.appData };
}

function consumerReconcileView({ consumer, producerId }: ConsumerEntry): z.output<typeof consumerReconcileSchema> {
  return { id: consumer.id, producerId, paused: consumer.paused, producerPaused: consumer.producerPaused, appData: consumer.appData };
}

export function routerStateView(kinds: KindTable, state: RouterState): z.output<RoomStateContract['routerStateSchema']> {
  return {
    ...routerSummaryView(state),
    rtpCapabilities: state.entry.router.rtpCapabilities,
    transports: state.transports.map(({ entry, producers, consumers, dataProducers, dataConsumers }) => ({
      id: entry.transport.id,
      direction: entry.direction,
      workerPid: entry.worker.pid,
      connected: entry.connected,
      iceState: entry.transport.iceState,
      dtlsState: entry.transport.dtlsState,
      appData: entry.transport.appData,
      producers: producers.map(producerStateView),
      consumers: consumers.map(consumerReconcileView),
      dataProducers: dataProducers.map((p) => ({ ...dataProducerView(p), appData: p.dataProducer.appData })),
      dataConsumers: dataConsumers.map((c) => ({ ...dataConsumerView(c), appData: c.dataConsumer.appData })),
    })),
    ...roomStateView(kinds, state),
  };
}

/** The lists of the kinds that stand for a transport, each under its plural, through its row's view. */
function roomStateView(kinds: KindTable, state: RouterState): RoomStateShapeOutput {
  return Object.fromEntries(
    roomStateKindsOf(kinds).map((kind) => {
      const { plural, roomState } = kinds[kind];
      const view = roomState.view as (entry: unknown, producers: unknown[], consumers: unknown[]) => unknown;
      return [plural, state.standIns[kind].map(({ entry, producers, consumers }) => view(entry, producers.map(producerStateView), consumers.map(consumerReconcileView)))];
    }),
  ) as RoomStateShapeOutput;
}

type RoomStateShapeOutput = { [P in keyof RoomStateShape<KindTable>]: z.output<RoomStateShape<KindTable>[P]> };
