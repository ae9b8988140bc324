// The consumer's row in the kinds table (kinds/index.ts): it closes with its producer at once.
import type { ConsumerEntry } from '../../registry/entries.js';
import { kindRow } from '../row.js';

export const CONSUMER_KINDS = {
  consumer: kindRow<ConsumerEntry>()({
    name: 'consumer',
    plural: 'consumers',
    parents: ['transport', 'producer'],
    closeWith: ['producer'],
    roomCap: 'maxConsumersPerRouter',
    closed: ({ consumer, routerId, transportId, producerId }, reason) => ({
      type: 'consumer.closed',
      consumerId: consumer.id,
      producerId,
      transportId,
      routerId,
      appData: consumer.appData,
      reason: reason as never,
    }),
  }),
};
