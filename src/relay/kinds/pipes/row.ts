// The pipe transport's row in the kinds table (kinds/index.ts): its entry, its place under the
// router, its close event, its cap and the port it takes.
import type { types as ms } from 'mediasoup';
import { kindRow } from '../row.js';
import { pipeTransportStateSchema } from './contract.js';
import { z } from 'zod';

/** A transport to another relay (ops.ts); its producers and consumers name it as `transportId`. */
export interface PipeTransportEntry {
  readonly pipeTransport: ms.PipeTransport;
  readonly worker: ms.Worker;
  readonly routerId: string;
  /** The family of the address it listens on: a connect must name the other relay's address of it. */
  readonly listenFamily: 4 | 6;
  /** Set before the engine's connect() runs, reverted if it fails: a second connect is refused. */
  connected: boolean;
}

export const PIPE_KINDS = {
  pipeTransport: kindRow<PipeTransportEntry>()({
    name: 'pipeTransport',
    plural: 'pipeTransports',
    parents: ['router'],
    closeWith: [],
    standsFor: 'transport',
    roomCap: 'maxPipeTransportsPerRouter',
    ports: () => 1,
    roomState: {
      schema: z.array(pipeTransportStateSchema).describe('pipe transports to other relays (cascading)'),
      view: (entry, producers, consumers) => ({
        id: entry.pipeTransport.id,
        connected: entry.connected,
        appData: entry.pipeTransport.appData,
        producers,
        consumers,
      }),
    },
    closed: ({ pipeTransport, routerId }, reason) => ({
      type: 'pipeTransport.closed',
      pipeTransportId: pipeTransport.id,
      routerId,
      appData: pipeTransport.appData,
      reason: reason as never,
    }),
  }),
};

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    pipeTransport: (typeof PIPE_KINDS)['pipeTransport'];
  }
}
