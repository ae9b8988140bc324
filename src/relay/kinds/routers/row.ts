// The router's row in the kinds table (kinds/index.ts): a room, named by its first router.
import type { RouterEntry } from '../../registry/entries.js';
import type { types as ms } from 'mediasoup';
import { kindRow } from '../row.js';

export const ROUTER_KINDS = {
  router: kindRow<RouterEntry>()({
    name: 'router',
    plural: 'routers',
    parents: [],
    closeWith: [],
    watch(entry, publish) {
      const { router } = entry;
      // The only RTP observers the relay makes are a room's speaker observers (ops/speakers.ts, kept
      // on the entry as `speakers`); each emits only its own kind's events, so both are listened to.
      router.observer.on('newrtpobserver', (rtpObserver) => {
        (rtpObserver as ms.ActiveSpeakerObserver).observer.on('dominantspeaker', ({ producer }) =>
          publish({ type: 'router.activeSpeaker', routerId: router.id, producerId: producer.id, appData: producer.appData }),
        );
        const levels = (rtpObserver as ms.AudioLevelObserver).observer;
        levels.on('volumes', (volumes) =>
          publish({
            type: 'router.audioLevels',
            routerId: router.id,
            volumes: volumes.map(({ producer, volume }) => ({ producerId: producer.id, volume, appData: producer.appData })),
          }),
        );
        levels.on('silence', () => publish({ type: 'router.silence', routerId: router.id }));
      });
    },
    closed: ({ router }, reason) => ({ type: 'router.closed', routerId: router.id, appData: router.appData, reason: reason as never }),
  }),
};

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    router: (typeof ROUTER_KINDS)['router'];
  }
}
