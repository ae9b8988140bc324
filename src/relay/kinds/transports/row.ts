// The WebRTC transport's row in the kinds table (kinds/index.ts).
import type { TransportEntry } from '../../registry/entries.js';
import { kindRow } from '../row.js';

export const TRANSPORT_KINDS = {
  transport: kindRow<TransportEntry>()({
    name: 'transport',
    plural: 'transports',
    parents: ['router'],
    closeWith: [],
    carriesMedia: true,
    roomCap: 'maxTransportsPerRouter',
    watch(entry, publish) {
      const { transport, routerId } = entry;
      const base = { transportId: transport.id, routerId, appData: transport.appData };
      transport.observer.on('icestatechange', (state) => publish({ type: 'transport.ice', ...base, state }));
      transport.observer.on('dtlsstatechange', (state) => publish({ type: 'transport.dtls', ...base, state }));
    },
    closed: ({ transport, routerId }, reason) => ({
      type: 'transport.closed',
      transportId: transport.id,
      routerId,
      appData: transport.appData,
      reason: reason as never,
    }),
  }),
};

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    transport: (typeof TRANSPORT_KINDS)['transport'];
  }
}
