// The producer's row in the kinds table (kinds/index.ts).
import type { ProducerEntry } from '../../registry/entries.js';
import type { types as ms } from 'mediasoup';
import { kindRow } from '../row.js';

export const PRODUCER_KINDS = {
  producer: kindRow<ProducerEntry>()({
    name: 'producer',
    plural: 'producers',
    parents: ['transport'],
    closeWith: [],
    roomCap: 'maxProducersPerRouter',
    watch(entry, publish) {
      const { producer, routerId, transportId } = entry;
      const base = { producerId: producer.id, transportId, routerId, appData: producer.appData };
      producer.observer.on('pause', () => publish({ type: 'producer.paused', ...base }));
      producer.observer.on('resume', () => publish({ type: 'producer.resumed', ...base }));
      producer.observer.on('score', (score) => publish({ type: 'producer.score', ...base, score: score.map(scoreOfStream) }));
    },
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

function scoreOfStream(s: ms.ProducerScore) {
  return { ssrc: s.ssrc, score: s.score, ...(s.rid === undefined ? {} : { rid: s.rid }) };
}

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    producer: (typeof PRODUCER_KINDS)['producer'];
  }
}
