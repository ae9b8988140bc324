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
    closed: ({ transport, routerId }, reason) => ({
      type: 'transport.closed',
      transportId: transport.id,
      routerId,
      appData: transport.appData,
      reason: reason as never,
    }),
  }),
};
