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
    watch(entry, publish) {
      const { consumer } = entry;
      const base = onConsumer(entry);
      // The observer's pause fires only when a consumer goes from playing to paused: its own flag says
      // whether the API did it. Its resume fires when the last of the two causes goes: mediasoup emits
      // the consumer's own producerresume just before, in the same synchronous run, when it was the
      // producer's (the mark is dropped after that run, so it never outlives the resume it explains).
      let producerResuming = false;
      consumer.on('producerresume', () => {
        producerResuming = true;
        queueMicrotask(() => (producerResuming = false));
      });
      consumer.observer.on('pause', () => publish({ type: 'consumer.paused', ...base, by: consumer.paused ? 'api' : 'producer' }));
      consumer.observer.on('resume', () => publish({ type: 'consumer.resumed', ...base, by: producerResuming ? 'producer' : 'api' }));
      consumer.observer.on('score', (score) =>
        publish({ type: 'consumer.score', ...base, score: { score: score.score, producerScore: score.producerScore, producerScores: [...score.producerScores] } }),
      );
      consumer.observer.on('layerschange', (layers) =>
        publish({ type: 'consumer.layers', ...base, spatialLayer: layers?.spatialLayer ?? null, temporalLayer: layers?.temporalLayer ?? null }),
      );
    },
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

function onConsumer({ consumer, routerId, transportId, producerId }: ConsumerEntry) {
  return { consumerId: consumer.id, producerId, transportId, routerId, appData: consumer.appData };
}

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    consumer: (typeof CONSUMER_KINDS)['consumer'];
  }
}
