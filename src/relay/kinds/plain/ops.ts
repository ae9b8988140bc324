// Plain RTP transports: RTP in and out of a room for ffmpeg, GStreamer, an OBS bridge, and the
// relay's own recordings. Producers and consumers on one are made through the ordinary producer and
// consumer ops (their `transportId` names it: the kinds table has a plain transport stand for a
// transport), so they are ordinary producers and consumers of the room, closing with it as with a
// WebRTC transport (`transport_closed`).
import { isIP } from 'node:net';
import { adopt, goneError } from '../../engine/call.js';
import { conflict, RelayError, validationError } from '../../errors.js';
import type { ConnectPlainTransportBody, CreatePlainTransportBody } from './contract.js';
import type { PlainTransportEntry } from './row.js';
import type { RelayEvent } from '../../contract/events.js';
import { placeTransport } from '../../rooms/rooms.js';
import { workerPorts, type OpsDeps } from '../../ops/deps.js';
import { pipePeerProblem } from '../../ops/pipe-peer.js';

export async function createPlainTransport(deps: OpsDeps, input: CreatePlainTransportBody): Promise<PlainTransportEntry> {
  const { config, registry, engine, caps } = deps;
  const { routerId } = input;
  const room = registry.require('router', routerId);
  const rtcpMux = input.rtcpMux ?? true;
  const comedia = input.comedia ?? false;
  // Refused here with the reason; a race past this check gets the engine's own failure, the same code.
  const { ports, used } = workerPorts(deps);
  if (used + (rtcpMux ? 1 : 2) > ports) {
    throw new RelayError('MEDIASOUP_ERROR', `no port left for plain transports: the ${ports} of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers are in use`, {
      ports,
      used,
    });
  }
  return caps.reserve(routerId, 'plainTransport', async () => {
    const { listenIp, announcedIp } = config.plain;
    const { router, worker } = await placeTransport(deps, room);
    const plainTransport = await engine(
      'create plain transport',
      () =>
        router.createPlainTransport({
          listenIp: announcedIp === undefined ? { ip: listenIp } : { ip: listenIp, announcedIp },
          rtcpMux,
          comedia,
          enableSrtp: input.enableSrtp ?? false,
          ...(input.appData ? { appData: input.appData } : {}),
        }),
      [['router', routerId]],
      worker,
    );
    return adopt(plainTransport, () => {
      if (plainTransport.closed || !registry.has('router', routerId)) throw goneError('router', routerId, worker, 'create plain transport');
      return registry.add('plainTransport', {
        plainTransport,
        worker,
        routerId,
        listenFamily: isIP(listenIp) === 6 ? 6 : 4,
        comedia,
        rtcpMux,
        connected: false,
      });
    });
  });
}

/**
 * Where the transport sends its RTP. The marker goes up before the engine call, so a concurrent
 * second connect is refused too; the target is checked as a pipe transport's is (ops/pipe-peer.ts),
 * loopback allowed (ffmpeg on the same machine is the common case).
 */
export async function connectPlainTransport(deps: OpsDeps, id: string, input: ConnectPlainTransportBody): Promise<PlainTransportEntry> {
  const { registry, engine } = deps;
  const entry = registry.require('plainTransport', id);
  const { plainTransport } = entry;
  if (entry.connected) throw conflict(`plain transport already connected or connecting: ${id}`, { plainTransportId: id });
  if (entry.comedia) throw conflict(`plain transport ${id} is comedia: it sends to where its RTP comes from`, { plainTransportId: id });
  const problem = pipePeerProblem(input.ip, entry.listenFamily, undefined);
  if (problem) throw validationError([{ path: 'ip', message: problem.replace('pipe transport', 'plain transport') }]);
  if (entry.rtcpMux && input.rtcpPort !== undefined) {
    throw validationError([{ path: 'rtcpPort', message: 'this plain transport was created with rtcpMux: RTCP goes to port' }]);
  }
  const srtp = plainTransport.srtpParameters !== undefined;
  if (srtp && !input.srtpParameters) throw validationError([{ path: 'srtpParameters', message: 'required: this plain transport has SRTP' }]);
  if (!srtp && input.srtpParameters) throw validationError([{ path: 'srtpParameters', message: 'this plain transport was created without enableSrtp' }]);
  entry.connected = true;
  try {
    await engine(
      'connect plain transport',
      () =>
        plainTransport.connect({
          ip: input.ip,
          port: input.port,
          ...(input.rtcpPort === undefined ? {} : { rtcpPort: input.rtcpPort }),
          ...(input.srtpParameters ? { srtpParameters: input.srtpParameters } : {}),
        }),
      [['plainTransport', id]],
    );
  } catch (error) {
    entry.connected = false;
    throw error;
  }
  if (!registry.has('plainTransport', id)) throw goneError('plainTransport', id, entry.worker, 'connect plain transport');
  return entry;
}

/** Closes a plain transport: its producers (and their consumers) and its consumers close with it. */
export function closePlainTransport(deps: OpsDeps, id: string): void {
  const { plainTransport } = deps.registry.require('plainTransport', id);
  deps.registry.markClosing(plainTransport, 'api');
  plainTransport.close();
}

/**
 * The relay's own loopback transport (a recording's track to its ffmpeg): a plain transport, RTCP on
 * its own port, not connected yet; its id. Its close event is the plain transport's.
 */
export async function createLoopback(deps: OpsDeps, input: { routerId: string; appData: Record<string, unknown> }): Promise<string> {
  const entry = await createPlainTransport(deps, { routerId: input.routerId, rtcpMux: false, comedia: false, appData: input.appData });
  return entry.plainTransport.id;
}

/** Points the loopback transport `id` at `port` of `ip` (RTP), RTCP at the next port. */
export async function connectLoopback(deps: OpsDeps, id: string, input: { ip: string; port: number }): Promise<void> {
  await connectPlainTransport(deps, id, { ip: input.ip, port: input.port, rtcpPort: input.port + 1 });
}

/** Closes the loopback transport `id` (its consumer closes with it). */
export function closeLoopback(deps: OpsDeps, id: string): void {
  closePlainTransport(deps, id);
}

/** A loopback transport's close as the recording holding it reads it. */
export interface LoopbackClose {
  readonly id: string;
  /** The close event's reason (`api`, `router_closed`, `shutdown`, `worker_died`, ...). */
  readonly reason: string;
  /** What the transport is, in words, for the recording's error ("its plain transport closed (api)"). */
  readonly what: string;
}

/**
 * When `event` is the close of a loopback transport (a plain transport's close): its id and reason,
 * so that a recording learns of its transport's close without naming the kind. Reads no deps.
 */
export function loopbackClosed(_deps: OpsDeps, event: RelayEvent): LoopbackClose | undefined {
  if (event.type !== 'plainTransport.closed') return undefined;
  return { id: event.plainTransportId, reason: event.reason, what: 'plain transport' };
}
