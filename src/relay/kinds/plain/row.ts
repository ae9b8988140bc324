// The plain transport's row in the kinds table (kinds/index.ts): its entry, its place under the
// router, its close event, its cap and the ports it takes.
import type { types as ms } from 'mediasoup';
import { kindRow } from '../row.js';
import { plainTransportStateSchema } from './contract.js';
import { z } from 'zod';

/** A plain RTP transport (ops.ts): ffmpeg, GStreamer or a recording; its producers and consumers name it as `transportId`. */
export interface PlainTransportEntry {
  readonly plainTransport: ms.PlainTransport;
  readonly worker: ms.Worker;
  readonly routerId: string;
  readonly listenFamily: 4 | 6;
  readonly comedia: boolean;
  readonly rtcpMux: boolean;
  /** Set before the engine's connect() runs, reverted if it fails: a second connect is refused. */
  connected: boolean;
}

export const PLAIN_KINDS = {
  plainTransport: kindRow<PlainTransportEntry>()({
    name: 'plainTransport',
    plural: 'plainTransports',
    parents: ['router'],
    closeWith: [],
    standsFor: 'transport',
    carriesMedia: true,
    roomCap: 'maxPlainTransportsPerRouter',
    // Without rtcpMux, RTCP takes a port of its own.
    ports: (entry) => (entry.rtcpMux ? 1 : 2),
    roomState: {
      schema: z.array(plainTransportStateSchema).describe('plain RTP transports (ingest, recordings)'),
      view: (entry, producers, consumers) => ({
        id: entry.plainTransport.id,
        connected: entry.connected,
        comedia: entry.comedia,
        rtcpMux: entry.rtcpMux,
        appData: entry.plainTransport.appData,
        producers,
        consumers,
      }),
    },
    closed: ({ plainTransport, routerId }, reason) => ({
      type: 'plainTransport.closed',
      plainTransportId: plainTransport.id,
      routerId,
      appData: plainTransport.appData,
      reason: reason as never,
    }),
  }),
};

// Its kinds in the types' view of the table (row.ts KindTable).
declare module '../row.js' {
  interface KindTable {
    plainTransport: (typeof PLAIN_KINDS)['plainTransport'];
  }
}
