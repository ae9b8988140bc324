// The data producer's and data consumer's rows in the kinds table (kinds/index.ts); they are capped
// per transport (MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT, ops.ts), not per router.
import type { DataConsumerEntry, DataProducerEntry } from '../../registry/entries.js';
import { kindRow } from '../row.js';

export const DATA_KINDS = {
  dataProducer: kindRow<DataProducerEntry>()({
    name: 'dataProducer',
    plural: 'dataProducers',
    parents: ['transport'],
    closeWith: [],
    closed: ({ dataProducer, routerId, transportId }, reason) => ({
      type: 'dataProducer.closed',
      dataProducerId: dataProducer.id,
      transportId,
      routerId,
      appData: dataProducer.appData,
      reason: reason as never,
    }),
  }),
  dataConsumer: kindRow<DataConsumerEntry>()({
    name: 'dataConsumer',
    plural: 'dataConsumers',
    parents: ['transport', 'dataProducer'],
    closeWith: ['dataProducer'],
    closed: ({ dataConsumer, routerId, transportId, dataProducerId }, reason) => ({
      type: 'dataConsumer.closed',
      dataConsumerId: dataConsumer.id,
      dataProducerId,
      transportId,
      routerId,
      appData: dataConsumer.appData,
      reason: reason as never,
    }),
  }),
};

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    dataProducer: (typeof DATA_KINDS)['dataProducer'];
    dataConsumer: (typeof DATA_KINDS)['dataConsumer'];
  }
}
