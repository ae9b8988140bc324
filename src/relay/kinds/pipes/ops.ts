// Pipe transports: a room's media carried to (and from) the same room on another relay. A pipe
// consumer sends a producer of this relay; a pipe producer receives one from another relay, under
// that producer's own id, and is then an ordinary producer of the room (consumable, pausable, with
// its events). Both sit in the registry as `consumer`/`producer` entries whose `transportId` is the
// pipe transport's (the kinds table: a pipe transport stands for a transport), so closes cascade
// as for a WebRTC transport: the pipe transport's close closes them with `transport_closed`.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { types as ms } from 'mediasoup';
import { adopt, goneError } from '../../engine/call.js';
import { conflict, RelayError, validationError } from '../../errors.js';
import type { ConnectPipeTransportBody, CreatePipeConsumerBody, CreatePipeProducerBody, CreatePipeTransportBody } from './contract.js';
import type { ConsumerEntry } from '../../registry/kinds.js';
import type { PipeTransportEntry } from './row.js';
import type { MediaRegistry } from '../../registry/registry.js';
import { ensureProducerOn, placeTransport, requirePart, type PipeLease } from '../../rooms/rooms.js';
import { workerPorts, type OpsDeps } from '../../ops/deps.js';
import { pipePeerProblem } from '../../ops/pipe-peer.js';
import { joinSpeakerDetection } from '../../ops/speakers.js';

/**
 * Producer ids being created through pipe producers, per registry: a second request for the same id
 * is refused while the first is with the engine (the registry only knows it once it is made).
 */
const PENDING_PIPE_PRODUCERS = new WeakMap<MediaRegistry, Set<string>>();

export async function createPipeTransport(deps: OpsDeps, input: CreatePipeTransportBody): Promise<PipeTransportEntry> {
  const { config, registry, engine, caps } = deps;
  const { routerId } = input;
  if (!config.pipe) {
    throw conflict('pipe transports are not enabled on this relay: set MEDIASOUP_PIPE_LISTEN_IP', { setting: 'MEDIASOUP_PIPE_LISTEN_IP' });
  }
  const room = registry.require('router', routerId);
  // Each pipe transport holds one port of those the WebRtcServers leave (config.ts checks there is
  // one). Refused here with the reason; a race past this check gets the engine's own failure, the same code.
  const { ports, used: open } = workerPorts(deps);
  if (open >= ports) {
    throw new RelayError('MEDIASOUP_ERROR', `no port left for pipe transports: the ${ports} of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers are in use`, {
      pipeTransports: open,
      ports,
    });
  }
  return caps.reserve(routerId, 'pipeTransport', async () => {
    const listenIp = await pipeListenIp(config.pipe!);
    // A room over several workers: the pipe transport goes where a WebRTC transport of the room would.
    const { router, worker } = await placeTransport(deps, room);
    const pipeTransport = await engine(
      'create pipe transport',
      () =>
        // `listenIp` (no port: the worker picks one of the ports the WebRtcServers leave) is what
        // mediasoup 3.11 takes and what upstream still accepts beside its newer `listenInfo`.
        router.createPipeTransport({
          listenIp,
          enableSrtp: input.enableSrtp ?? true,
          // Both sides are this relay's code: NACK/RTX recover what the network between machines loses.
          enableRtx: true,
          ...(input.appData ? { appData: input.appData } : {}),
        }),
      [['router', routerId]],
    );
    return adopt(pipeTransport, () => {
      if (pipeTransport.closed || !registry.has('router', routerId)) throw goneError('router', routerId, worker, 'create pipe transport');
      return registry.add('pipeTransport', { pipeTransport, worker, routerId, listenFamily: isIP(listenIp.ip) === 6 ? 6 : 4, connected: false });
    });
  });
}

/**
 * The marker goes up before the engine call, so a concurrent second connect is refused too. The
 * target is checked first (src/relay/ops/pipe-peer.ts): RTP goes where the caller says.
 */
export async function connectPipeTransport(deps: OpsDeps, id: string, input: ConnectPipeTransportBody): Promise<PipeTransportEntry> {
  const { registry, engine } = deps;
  const entry = registry.require('pipeTransport', id);
  const { pipeTransport } = entry;
  if (entry.connected) throw conflict(`pipe transport already connected or connecting: ${id}`, { pipeTransportId: id });
  const problem = pipePeerProblem(input.ip, entry.listenFamily, deps.config.pipe?.peerCidrs);
  if (problem) throw validationError([{ path: 'ip', message: problem }]);
  const srtp = pipeTransport.srtpParameters !== undefined;
  if (srtp && !input.srtpParameters) {
    throw validationError([{ path: 'srtpParameters', message: 'required: this pipe transport has SRTP (give the srtpParameters the other side answered)' }]);
  }
  if (!srtp && input.srtpParameters) {
    throw validationError([{ path: 'srtpParameters', message: 'this pipe transport was created with enableSrtp false' }]);
  }
  entry.connected = true;
  try {
    await engine(
      'connect pipe transport',
      () => pipeTransport.connect({ ip: input.ip, port: input.port, ...(input.srtpParameters ? { srtpParameters: input.srtpParameters } : {}) }),
      [['pipeTransport', id]],
    );
  } catch (error) {
    entry.connected = false;
    throw error;
  }
  if (!registry.has('pipeTransport', id)) throw goneError('pipeTransport', id, entry.worker, 'connect pipe transport');
  return entry;
}

/**
 * Makes producer `producerId` of room `routerId` consumable on the pipe transport's worker: a
 * producer on another worker of the room is piped there first (once, shared with the room's own
 * consumers). The lease keeps that copy until the pipe consumer, a consumer on that worker, holds it.
 */
async function producerOnPipeWorker(deps: OpsDeps, producerId: string, entry: PipeTransportEntry): Promise<PipeLease> {
  const producer = deps.registry.require('producer', producerId);
  if (producer.routerId !== entry.routerId) {
    throw new RelayError('CAN_NOT_CONSUME', `cannot pipe producer ${producerId}: it belongs to another router`, {
      producerId,
      routerId: entry.routerId,
      reason: 'producer belongs to another router',
    });
  }
  const room = deps.registry.require('router', entry.routerId);
  return ensureProducerOn(deps, producerId, requirePart(room, entry.worker, 'create pipe consumer'));
}

/** A pipe consumer: sends producer `producerId` to the relay at the other end (not paused unless the producer is). */
export async function createPipeConsumer(deps: OpsDeps, id: string, input: CreatePipeConsumerBody): Promise<ConsumerEntry> {
  const { registry, engine, caps } = deps;
  const { producerId } = input;
  const entry = registry.require('pipeTransport', id);
  return caps.reserve(entry.routerId, 'consumer', async () => {
    const lease = await producerOnPipeWorker(deps, producerId, entry);
    try {
      const consumer = await engine('create pipe consumer', () => entry.pipeTransport.consume({ producerId }), [
        ['pipeTransport', id],
        ['producer', producerId],
      ]);
      return adopt(consumer, () => {
        if (!registry.has('pipeTransport', id)) throw goneError('pipeTransport', id, entry.worker, 'create pipe consumer');
        if (consumer.closed || !registry.has('producer', producerId)) throw goneError('producer', producerId, entry.worker, 'create pipe consumer');
        return registry.add('consumer', { consumer, worker: entry.worker, routerId: entry.routerId, transportId: id, producerId });
      });
    } finally {
      lease.release();
    }
  });
}

/**
 * A pipe producer: the media of producer `producerId` of another relay, under that same id. It is
 * an ordinary producer of the room from then on (consumers, pause, speaker detection, events).
 */
export async function createPipeProducer(deps: OpsDeps, id: string, input: CreatePipeProducerBody): Promise<ms.Producer> {
  const { registry, engine, caps } = deps;
  const { producerId } = input;
  const entry = registry.require('pipeTransport', id);
  let pending = PENDING_PIPE_PRODUCERS.get(registry);
  if (!pending) PENDING_PIPE_PRODUCERS.set(registry, (pending = new Set()));
  if (pending.has(producerId)) {
    throw conflict(`producer ${producerId} is being created on this relay`, { producerId, resource: 'producer' });
  }
  refuseTakenId(registry, producerId);
  pending.add(producerId);
  try {
    return await caps.reserve(entry.routerId, 'producer', async () => {
      const producer = await engine(
        'create pipe producer',
        () =>
          entry.pipeTransport.produce({
            id: producerId,
            kind: input.kind,
            // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- upstream mediasoup 3.27's typings (npm run typecheck:upstream) need it
            rtpParameters: input.rtpParameters as unknown as ms.RtpParameters,
            paused: input.paused ?? false,
            ...(input.appData ? { appData: input.appData } : {}),
          }),
        [['pipeTransport', id]],
      );
      adopt(producer, () => {
        if (producer.closed || !registry.has('pipeTransport', id)) throw goneError('pipeTransport', id, entry.worker, 'create pipe producer');
        registry.add('producer', { producer, worker: entry.worker, routerId: entry.routerId, transportId: id });
      });
      await joinSpeakerDetection(deps, producer, entry.routerId).catch((error: unknown) => {
        producer.close();
        throw error;
      });
      return producer;
    });
  } finally {
    pending.delete(producerId);
  }
}

/**
 * An id handed in by another relay must not name anything of this one: mediasoup keeps the ids of
 * every kind of a worker in one table (a clash there was a 500), and the registry's maps and the
 * events would mix two resources. Checked against every kind of the kinds table.
 */
function refuseTakenId(registry: MediaRegistry, id: string): void {
  for (const kind of registry.order) {
    const entry = registry.get(kind, id);
    if (!entry) continue;
    const where = 'routerId' in entry ? { routerId: entry.routerId, ...('transportId' in entry ? { transportId: entry.transportId } : {}) } : {};
    throw conflict(`id ${id} is already used by a ${kind} on this relay`, { producerId: id, resource: kind, ...where });
  }
}

/** Closes a pipe transport: its pipe consumers and pipe producers (with their consumers) close with it. */
export function closePipeTransport(deps: OpsDeps, id: string): void {
  const { pipeTransport } = deps.registry.require('pipeTransport', id);
  deps.registry.markClosing(pipeTransport, 'api');
  pipeTransport.close();
}

/** MEDIASOUP_PIPE_LISTEN_IP / _ANNOUNCED_IP, host names (Fly.io's `fly-local-6pn`) resolved now. */
export async function pipeListenIp(pipe: NonNullable<OpsDeps['config']['pipe']>): Promise<{ ip: string; announcedIp?: string }> {
  const ip = await resolveAddress(pipe.listenIp, 'MEDIASOUP_PIPE_LISTEN_IP');
  const announcedIp = pipe.announcedIp === undefined ? undefined : await resolveAddress(pipe.announcedIp, 'MEDIASOUP_PIPE_ANNOUNCED_IP');
  return announcedIp === undefined ? { ip } : { ip, announcedIp };
}

async function resolveAddress(address: string, setting: string): Promise<string> {
  if (isIP(address) !== 0) return address;
  try {
    return (await lookup(address)).address;
  } catch {
    throw new RelayError('MEDIASOUP_ERROR', `${setting}: cannot resolve "${address}"`, { setting });
  }
}
