// Data producers and data consumers: SCTP data channels relayed between transports of one router.
// A data producer needs a send transport, a data consumer a recv transport, both with SCTP enabled.
import type { types as ms } from 'mediasoup';
import { adopt } from '../../engine/call.js';
import { conflict, notFound, RelayError } from '../../errors.js';
import type { CreateDataConsumerBody, CreateDataProducerBody } from './contract.js';
import type { DataConsumerEntry, DataProducerEntry, TransportEntry } from '../../registry/kinds.js';
import { ensureProducerOn, requirePart } from '../../rooms/rooms.js';
import { directionConflict, type OpsDeps } from '../../ops/deps.js';

/** A transport fit for data: the direction asked, SCTP enabled, below its data channel cap. */
function dataTransport(deps: OpsDeps, transportId: string, direction: 'send' | 'recv'): TransportEntry {
  const { registry, config } = deps;
  const entry = registry.require('transport', transportId);
  const what = direction === 'send' ? 'produce data on a recv transport' : 'consume data on a send transport';
  if (entry.direction !== direction) throw directionConflict(`cannot ${what}: ${transportId}`, entry);
  if (!entry.transport.sctpParameters) {
    throw conflict(`transport was created without enableSctp: ${transportId}`, { transportId, direction: entry.direction, enableSctp: false });
  }
  const held = registry.children('transport', transportId, 'dataProducer').length + registry.children('transport', transportId, 'dataConsumer').length;
  if (held >= config.maxDataChannelsPerTransport) {
    throw conflict(`data channel limit of the transport reached: ${config.maxDataChannelsPerTransport}`, {
      transportId,
      maxDataChannelsPerTransport: config.maxDataChannelsPerTransport,
    });
  }
  return entry;
}

/**
 * Without sctpStreamParameters the data producer takes the lowest stream id no other data producer
 * of the transport uses, reliable and ordered; the answer tells the client which one.
 */
export async function createDataProducer(deps: OpsDeps, input: CreateDataProducerBody): Promise<DataProducerEntry> {
  const { registry, engine } = deps;
  const { transportId } = input;
  const entry = dataTransport(deps, transportId, 'send');
  const used = new Set(registry.children('transport', transportId, 'dataProducer').map((e) => e.dataProducer.sctpStreamParameters?.streamId));
  const sctpStreamParameters = input.sctpStreamParameters ?? { streamId: lowestFree(used), ordered: true };
  if (used.has(sctpStreamParameters.streamId)) {
    throw conflict(`SCTP stream ${sctpStreamParameters.streamId} is already used by a data producer of the transport`, {
      transportId,
      direction: entry.direction,
      streamId: sctpStreamParameters.streamId,
    });
  }
  const dataProducer = await engine(
    'create data producer',
    () =>
      entry.transport.produceData({
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- upstream mediasoup 3.27's typings (npm run typecheck:upstream) need it
        sctpStreamParameters: sctpStreamParameters as ms.SctpStreamParameters,
        label: input.label ?? '',
        protocol: input.protocol ?? '',
        ...(input.appData ? { appData: input.appData } : {}),
      }),
    [['transport', transportId]],
  ).catch((error: unknown) => {
    // Two requests racing for one stream id: the engine refuses the second; name the transport as every CONFLICT does.
    if (error instanceof RelayError && error.code === 'CONFLICT') {
      throw conflict(error.message, { transportId, direction: entry.direction, streamId: sctpStreamParameters.streamId, ...error.details });
    }
    throw error;
  });
  return adopt(dataProducer, () => {
    if (dataProducer.closed || !registry.has('transport', transportId)) throw notFound('transport', transportId);
    return registry.add('dataProducer', { dataProducer, worker: entry.worker, routerId: entry.routerId, transportId });
  });
}

export function closeDataProducer(deps: OpsDeps, id: string): void {
  const { dataProducer } = deps.registry.require('dataProducer', id);
  deps.registry.markClosing(dataProducer, 'api');
  dataProducer.close();
}

/** The data consumer gets the data producer's label, protocol and reliability, on a stream id the transport picks. */
export async function createDataConsumer(deps: OpsDeps, input: CreateDataConsumerBody): Promise<DataConsumerEntry> {
  const { registry, engine } = deps;
  const { transportId, dataProducerId } = input;
  const entry = dataTransport(deps, transportId, 'recv');
  const room = registry.require('router', entry.routerId);
  const producer = registry.get('dataProducer', dataProducerId);
  // Not here: in a room that spans cluster nodes, another node may hold it (copied here below).
  if (!producer && !deps.span?.spans(room)) throw notFound('dataProducer', dataProducerId);
  if (producer && producer.routerId !== entry.routerId) {
    throw new RelayError('CAN_NOT_CONSUME', `cannot consume data producer ${dataProducerId} on this transport`, {
      dataProducerId,
      transportId,
      reason: 'data producer belongs to another router',
    });
  }
  // A data producer on another worker of the room is piped to this transport's worker first (once); one
  // on another node, copied from there.
  const part = requirePart(room, entry.worker, 'create data consumer');
  const lease = producer ? await ensureProducerOn(deps, dataProducerId, part, 'dataProducer') : await deps.span!.ensureProducer(room, dataProducerId, part, 'dataProducer');
  try {
    const dataConsumer = await engine(
      'create data consumer',
      () => entry.transport.consumeData({ dataProducerId, ...(input.appData ? { appData: input.appData } : {}) }),
      producer
        ? [
            ['transport', transportId],
            ['dataProducer', dataProducerId],
          ]
        : [['transport', transportId]],
    );
    return adopt(dataConsumer, () => {
      if (!registry.has('transport', transportId)) throw notFound('transport', transportId);
      if (dataConsumer.closed || (producer && !registry.has('dataProducer', dataProducerId))) throw notFound('dataProducer', dataProducerId);
      return registry.add('dataConsumer', { dataConsumer, worker: entry.worker, routerId: entry.routerId, transportId, dataProducerId });
    });
  } finally {
    lease.release();
  }
}

export function closeDataConsumer(deps: OpsDeps, id: string): void {
  const { dataConsumer } = deps.registry.require('dataConsumer', id);
  deps.registry.markClosing(dataConsumer, 'api');
  dataConsumer.close();
}

function lowestFree(used: Set<number | undefined>): number {
  let streamId = 0;
  while (used.has(streamId)) streamId++;
  return streamId;
}
