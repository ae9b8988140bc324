// WebRTC transports, each through its worker's WebRtcServer (one port per worker), on the part of
// the room that placeTransport chooses.
import type { types as ms } from 'mediasoup';
import { adopt, goneError } from '../../engine/call.js';
import { RelayError } from '../../errors.js';
import type { DtlsParametersInput } from '../../contract/rtp.js';
import type { CreateTransportBody } from './contract.js';
import type { TransportEntry } from '../../registry/kinds.js';
import { placeTransport } from '../../rooms/rooms.js';
import { directionConflict, type OpsDeps } from '../../ops/deps.js';

const SCTP_STREAMS = { OS: 1024, MIS: 1024 };

/**
 * A mediasoup router of the room's worker `slot` a transport goes on instead of the part placeTransport
 * chooses (a WHEP session's own router, whose codecs carry its player's payload types).
 */
export interface TransportPlace {
  readonly router: ms.Router;
  readonly worker: ms.Worker;
  readonly slot: number;
}

export async function createTransport(deps: OpsDeps, input: CreateTransportBody, on?: TransportPlace): Promise<TransportEntry> {
  const { registry, pool, engine, caps } = deps;
  const { routerId, direction } = input;
  const room = registry.require('router', routerId);
  return caps.reserve(routerId, 'transport', async () => {
    const { router, worker, slot } = on ?? (await placeTransport(deps, room));
    const webRtcServer = pool.slots[slot]?.webRtcServer;
    if (!webRtcServer || pool.slots[slot]?.worker !== worker) throw new RelayError('MEDIASOUP_ERROR', 'media worker of the router is not alive');
    const transport = await engine(
      'create transport',
      () =>
        router.createWebRtcTransport({
          webRtcServer,
          enableUdp: true,
          enableTcp: true,
          preferUdp: true,
          ...(input.enableSctp ? { enableSctp: true, numSctpStreams: SCTP_STREAMS } : {}),
          ...(input.appData ? { appData: input.appData } : {}),
        }),
      [['router', routerId]],
      worker,
    );
    return adopt(transport, () => {
      if (transport.closed || !registry.has('router', routerId)) throw goneError('router', routerId, worker, 'create transport');
      const outsideRoom = on !== undefined && ![...room.parts.values()].some((part) => part.router === on.router);
      return registry.add('transport', { transport, worker, routerId, direction, connected: false, ...(outsideRoom ? { outsideRoom: true as const } : {}) });
    });
  });
}

/** The marker goes up before the engine call, so a concurrent second connect is refused too. */
export async function connectTransport(deps: OpsDeps, id: string, dtlsParameters: DtlsParametersInput): Promise<TransportEntry> {
  const { registry, engine } = deps;
  const entry = registry.require('transport', id);
  if (entry.connected) throw directionConflict(`transport already connected or connecting: ${id}`, entry);
  entry.connected = true;
  try {
    await engine('connect transport', () => entry.transport.connect({ dtlsParameters }), [['transport', id]]);
  } catch (error) {
    entry.connected = false;
    throw error;
  }
  if (!registry.has('transport', id)) throw goneError('transport', id, entry.worker, 'connect transport');
  return entry;
}

/**
 * Closes a transport (a peer leaving a room that lives on): its producers, their consumers on
 * every transport, and its own consumers close with it. Closed through the transport itself, so
 * the worker's WebRtcServer forgets it too.
 */
export function closeTransport(deps: OpsDeps, id: string): void {
  const { transport } = deps.registry.require('transport', id);
  deps.registry.markClosing(transport, 'api');
  transport.close();
}
