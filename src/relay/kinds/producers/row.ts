// The producer's row in the kinds table (kinds/index.ts).
import type { ProducerEntry } from '../../registry/entries.js';
import { kindRow } from '../row.js';

export const PRODUCER_KINDS = {
  producer: kindRow<ProducerEntry>()({
    name: 'producer',
    plural: 'producers',
    parents: ['transport'],
    closeWith: [],
    roomCap: 'maxProducersPerRouter',
    closed: ({ producer, routerId, transportId }, reason) => ({
      type: 'producer.closed',
      producerId: producer.id,
      transportId,
      routerId,
      appData: producer.appData,
      reason: reason as never,
    }),
  }),
};
