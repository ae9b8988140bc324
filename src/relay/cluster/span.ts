// Rooms that span cluster nodes (issue 40): a room stays named by its first router (on its origin node);
// another node holds a part of it as a local router made with the room's codecs and registered under the
// room's id (RouterEntry.origin), as a worker holds a part of a room that spread over workers. The parts
// are never listed nor announced by themselves: the API answers as for one room.
//
// - Placement (origin): a new transport of the room stays on the origin while this node carries fewer
//   than CLUSTER_NODE_MAX_CONSUMERS consumers; past it, it goes to the least-loaded node of the room
//   under its own limit, else to the least-loaded live node under its own, the room's part being made
//   there first (POST /internal/v1/cluster/rooms/{id}).
// - A producer (or data producer) consumed on a node that does not hold it is copied there once, under
//   its own id, over a pair of pipe transports with SRTP (SCTP for data) (POST /internal/v1/cluster/pipes on the producer's node): the copy
//   is a PipedCopy of the room like a worker-to-worker one (rooms.ts), so it is reused by the node's
//   later consumers and closed with the last of them; pause and resume, and the producer's close, reach
//   it (POST /internal/v1/cluster/pipes/{id}/state from the producer's node).
// - The origin closes the room's parts with the room, and merges their state into GET /routers/{id}.
// - A node lost: the copies of its producers close, their consumers with reason `node_lost`.
import type { types as ms } from 'mediasoup';
import { isIP } from 'node:net';
import type { z } from 'zod';
import { copyCodecs, type RouterMediaCodec } from '../engine/codecs.js';
import type { Needs } from '../engine/call.js';
import { makeRoom } from '../kinds/routers/ops.js';
import { notFound, RelayError, validationError, type RelayErrorCode } from '../errors.js';
import { pipeListenIp } from '../kinds/pipes/ops.js';
import { workerPorts, type OpsDeps } from '../ops/deps.js';
import { pipePeerProblem } from '../ops/pipe-peer.js';
import { observeSpeaker } from '../ops/speakers.js';
import { roomIdOf, type PipedCopy, type RoomPart, type RouterEntry } from '../registry/kinds.js';
import { closeRoom, leaseCopy, requirePart, type PipeLease, type RemoteParts } from '../rooms/rooms.js';
import type { Logger } from '../../logger.js';
import type { ClusterView, NodeRecord } from './membership.js';
import { callNode } from './node-client.js';
import { openedPipeSchema, type EnsurePartBody, type OpenPipeBody, type PipeStateBody } from './contract.js';

/** A node-to-node call of this module answers within this, or is given up. */
const CALL_TIMEOUT_MS = 5_000;

type OpenedPipe = z.infer<typeof openedPipeSchema>;

/**
 * Both ends of a pipe between nodes: SRTP for media; SCTP for data (mediasoup encrypts RTP only: data
 * channel messages cross between nodes as plain SCTP over UDP, like its worker-to-worker pipes).
 */
function pipeOptions(listenIp: Awaited<ReturnType<typeof pipeListenIp>>, kind: 'producer' | 'dataProducer'): ms.PipeTransportOptions {
  return kind === 'producer' ? { listenIp, enableSrtp: true, enableRtx: true } : { listenIp, enableSrtp: true, enableSctp: true };
}

export interface SpanOptions {
  nodeId: string;
  view: () => ClusterView;
  /** The internal token every node shares: node-to-node calls made outside a request carry it. */
  token: string | undefined;
  /** CLUSTER_NODE_MAX_CONSUMERS of this node; undefined: this node's rooms never spread to other nodes. */
  maxConsumers: number | undefined;
  /** The node that holds `id` (the forwarder's memory, else asking every node), or undefined. */
  locate: (id: string) => Promise<NodeRecord | undefined>;
  logger: Logger;
}

/** This node's end of a pipe that carries one of its producers to another node. */
interface SourcePipe {
  transport: ms.PipeTransport;
  nodeId: string;
  producerId: string;
  /** The other end asked for the close (its copy closed): not told back. */
  closedByPeer: boolean;
}

/** This node's end of a pipe that brings another node's producer: the copy's transport. */
interface CopyPipe {
  transport: ms.PipeTransport;
  nodeId: string;
  producerId: string;
  copy: PipedCopy;
  closedByPeer: boolean;
}

export type Span = ReturnType<typeof createSpan>;

/** @example const span = createSpan(options, deps); media.attachSpan(span.remote) */
export function createSpan(options: SpanOptions, deps: OpsDeps) {
  const { registry, engine, config, logger } = deps;
  /** On the origin: room id → the other nodes holding a part of it. */
  const parts = new Map<string, Set<string>>();
  /** Parts of other nodes' rooms being made here: one creation per room. */
  const making = new Map<string, Promise<RouterEntry>>();
  const sources = new Map<string, SourcePipe>();
  const copies = new Map<string, CopyPipe>();

  /** Pipe transports this module made that are not closed yet: each holds a port of RTC_MIN_PORT-RTC_MAX_PORT. */
  let pipePorts = 0;

  /** A pipe transport of this module: refused (MEDIASOUP_ERROR, as a pipe transport's) when no port is left, counted until it closes. */
  async function pipeTransport(router: ms.Router, worker: ms.Worker, listenIp: Awaited<ReturnType<typeof pipeListenIp>>, kind: 'producer' | 'dataProducer', needs: Needs): Promise<ms.PipeTransport> {
    const { ports, used } = workerPorts(deps);
    if (used >= ports) {
      throw new RelayError('MEDIASOUP_ERROR', `no port left for a pipe between nodes: the ${ports} of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers are in use`, { ports, used });
    }
    pipePorts++;
    try {
      const transport = await engine('create pipe transport', () => router.createPipeTransport(pipeOptions(listenIp, kind)), needs, worker);
      transport.observer.once('close', () => pipePorts--);
      return transport;
    } catch (error) {
      pipePorts--;
      throw error;
    }
  }

  const headers = (): Record<string, string> => ({ 'content-type': 'application/json', ...(options.token ? { 'x-internal-token': options.token } : {}), 'x-cluster-forwarded-by': options.nodeId });
  const nodeById = (id: string) => options.view().nodes.find((node) => node.id === id);

  async function ask(node: NodeRecord | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    if (!node) throw new RelayError('NODE_UNREACHABLE', 'the node is not in the cluster', {});
    // A node that does not answer (refused, reset, silent past the deadline) is named, as the forwarder names one.
    const answer = await callNode(node.url, method, `/internal${path}`, headers(), body === undefined ? undefined : Buffer.from(JSON.stringify(body)), CALL_TIMEOUT_MS).catch((error: unknown) => {
      throw new RelayError('NODE_UNREACHABLE', `node ${node.id} did not answer: ${error instanceof Error ? error.message : String(error)}`, { nodeIds: [node.id] });
    });
    let parsed: unknown = null;
    try {
      parsed = answer.body.length > 0 ? JSON.parse(answer.body.toString('utf8')) : null;
    } catch {
      // not JSON: only the status counts
    }
    return { status: answer.status, body: parsed };
  }

  /** A notification to another node that nobody waits for: a failure is logged (the node may be gone). */
  function tell(nodeId: string, method: string, path: string, body?: unknown): void {
    ask(nodeById(nodeId), method, path, body).catch((err: unknown) => logger.warn({ err, nodeId, path }, 'cluster: a node was not told of a pipe change'));
  }

  /** The other node's error answer as this node's (same code, message and details). */
  function relayed(answer: { status: number; body: unknown }, what: string): RelayError {
    const body = answer.body as { code?: unknown; message?: unknown; details?: unknown } | null;
    const code = typeof body?.code === 'string' ? (body.code as RelayErrorCode) : 'MEDIASOUP_ERROR';
    try {
      return new RelayError(code, typeof body?.message === 'string' ? body.message : `${what}: answered ${answer.status}`, (body?.details as Record<string, unknown> | undefined) ?? {});
    } catch {
      return new RelayError('MEDIASOUP_ERROR', `${what}: answered ${answer.status}`);
    }
  }

  // ---- the room's parts -------------------------------------------------------------------------

  /** Origin: where a new transport of `roomId` goes; undefined: here. Its part there exists on return. */
  async function placeTransport(roomId: string): Promise<NodeRecord | undefined> {
    const max = options.maxConsumers;
    if (max === undefined) return undefined;
    const room = registry.get('router', roomId);
    if (!room || room.origin || !config.pipe) return undefined;
    if (registry.count('consumer') < max) return undefined;
    const view = options.view();
    if (view.degraded) return undefined;
    const under = (node: NodeRecord) => node.id !== options.nodeId && !node.load.draining && node.pipeAddress !== null && node.load.consumers < (node.load.maxConsumers ?? Number.POSITIVE_INFINITY);
    const byLoad = (a: NodeRecord, b: NodeRecord) => a.load.consumers - b.load.consumers || a.load.transports - b.load.transports || (a.id < b.id ? -1 : 1);
    const held = parts.get(roomId) ?? new Set<string>();
    const candidates = view.nodes.filter(under);
    const target = candidates.filter((node) => held.has(node.id)).sort(byLoad)[0] ?? candidates.sort(byLoad)[0];
    if (!target) return undefined;
    if (!held.has(target.id)) {
      // A node that refuses (full, draining) or does not answer leaves the transport here.
      const answer = await ask(target, 'POST', `/v1/cluster/rooms/${encodeURIComponent(roomId)}`, { nodeId: options.nodeId, mediaCodecs: room.mediaCodecs, ...(room.speakers ? { speakers: true } : {}) }).catch(
        (error: unknown) => ({ status: 0, body: error instanceof Error ? error.message : null }),
      );
      if (answer.status !== 204) {
        logger.warn({ roomId, nodeId: target.id, status: answer.status, answer: answer.body }, 'cluster: a part of a room could not be made on another node; the transport stays here');
        return undefined;
      }
      // The room may have closed meanwhile: its new part goes with it.
      if (registry.get('router', roomId) !== room) {
        tell(target.id, 'DELETE', `/v1/cluster/rooms/${encodeURIComponent(roomId)}`);
        throw notFound('router', roomId);
      }
      held.add(target.id);
      parts.set(roomId, held);
    }
    return target;
  }

  /** A part of another node's room here, made once (however many ask at once). */
  async function ensurePart(roomId: string, { nodeId: originId, mediaCodecs, speakers }: EnsurePartBody): Promise<void> {
    // Only a live node of the cluster has rooms: a part for any other would have no origin to close it.
    if (originId === options.nodeId || !nodeById(originId)) throw new RelayError('CONFLICT', `node ${originId} is not another live node of this cluster`, { nodeId: originId });
    const existing = registry.get('router', roomId);
    if (existing) {
      if (existing.origin?.nodeId !== originId) throw new RelayError('CONFLICT', `room ${roomId} is already held here`, { routerId: roomId });
      return;
    }
    let pending = making.get(roomId);
    if (!pending) {
      pending = makePart(roomId, originId, mediaCodecs as unknown as RouterMediaCodec[], speakers === true).finally(() => making.delete(roomId));
      making.set(roomId, pending);
    }
    await pending;
  }

  async function makePart(roomId: string, originId: string, mediaCodecs: RouterMediaCodec[], speakers: boolean): Promise<RouterEntry> {
    if (deps.draining()) throw new RelayError('DRAINING', 'the relay is draining: no part of a room is made here', {});
    return makeRoom(deps, { mediaCodecs: copyCodecs(mediaCodecs), appData: { roomId }, origin: { roomId, nodeId: originId, ...(speakers ? { speakers } : {}) } });
  }

  /** The room closed here (its origin): its parts on other nodes close too. */
  function roomClosed(room: RouterEntry): void {
    if (room.origin) return;
    const id = roomIdOf(room);
    const held = parts.get(id);
    parts.delete(id);
    for (const nodeId of held ?? []) tell(nodeId, 'DELETE', `/v1/cluster/rooms/${encodeURIComponent(id)}`);
  }

  /** A part of another node's room closes here, and everything in it (events as for any room's close). */
  function closePart(roomId: string): void {
    const room = registry.get('router', roomId);
    if (!room?.origin) throw notFound('router', roomId);
    closeRoom(registry, room, 'api');
  }

  // ---- producers copied between nodes ---------------------------------------------------------------

  /**
   * The producer's node: a pipe that carries `producerId` (a producer over SRTP, or a data producer over
   * SCTP) to the asking node's pipe transport.
   */
  async function openPipe(input: OpenPipeBody): Promise<OpenedPipe> {
    if (!config.pipe) throw new RelayError('CONFLICT', 'pipe transports are not enabled on this node: set MEDIASOUP_PIPE_LISTEN_IP', { setting: 'MEDIASOUP_PIPE_LISTEN_IP' });
    const kind = input.kind ?? 'producer';
    const source = kind === 'producer' ? registry.get('producer', input.producerId) : registry.get('dataProducer', input.producerId);
    if (!source) throw notFound(kind, input.producerId);
    if (source.routerId !== input.roomId) {
      const what = kind === 'producer' ? 'producer' : 'data producer';
      throw new RelayError('CAN_NOT_CONSUME', `cannot consume ${what} ${input.producerId}: it belongs to another router`, { [`${kind}Id`]: input.producerId, reason: `${what} belongs to another router` });
    }
    const listenIp = await pipeListenIp(config.pipe);
    const problem = pipePeerProblem(input.ip, isIP(listenIp.ip) === 6 ? 6 : 4, config.pipe.peerCidrs);
    if (problem) throw validationError([{ path: 'ip', message: problem }]);
    const room = registry.require('router', input.roomId);
    const part = requirePart(room, source.worker, 'pipe producer to another node');
    const needs: Needs = [[kind, input.producerId]];
    const transport = await pipeTransport(part.router, source.worker, listenIp, kind, needs);
    try {
      await engine('connect pipe transport', () => transport.connect({ ip: input.ip, port: input.port, srtpParameters: input.srtpParameters as ms.SrtpParameters }), needs, source.worker);
      const pipeId = transport.id;
      const end = { pipeId, ip: listenIp.announcedIp ?? listenIp.ip, port: transport.tuple.localPort, srtpParameters: transport.srtpParameters as OpenedPipe['srtpParameters'] };
      const path = `/v1/cluster/pipes/${pipeId}/state`;
      const sourcePipe: SourcePipe = { transport, nodeId: input.nodeId, producerId: input.producerId, closedByPeer: false };
      let opened: OpenedPipe;
      let consumer: { observer: { once(event: 'close', listener: () => void): unknown } };
      if (kind === 'producer') {
        const media = await engine('create pipe consumer', () => transport.consume({ producerId: input.producerId }), needs, source.worker);
        media.on('producerpause', () => tell(input.nodeId, 'POST', path, { paused: true }));
        media.on('producerresume', () => tell(input.nodeId, 'POST', path, { paused: false }));
        const appData = 'producer' in source ? source.producer.appData : {};
        opened = { ...end, kind: media.kind, rtpParameters: media.rtpParameters as unknown as Record<string, unknown>, paused: media.producerPaused, appData };
        consumer = media;
      } else {
        const data = await engine('create pipe data consumer', () => transport.consumeData({ dataProducerId: input.producerId }), needs, source.worker);
        opened = { ...end, kind: 'data', sctpStreamParameters: data.sctpStreamParameters!, label: data.label, protocol: data.protocol };
        consumer = data;
      }
      sources.set(pipeId, sourcePipe);
      // The producer (or its room) closed: the pipe goes, and the copy with it.
      consumer.observer.once('close', () => transport.close());
      transport.observer.once('close', () => {
        sources.delete(pipeId);
        if (!sourcePipe.closedByPeer) tell(input.nodeId, 'POST', path, { closed: true });
      });
      if (transport.closed) throw notFound(kind, input.producerId);
      return opened;
    } catch (error) {
      transport.close();
      throw error;
    }
  }

  /** The producer's node: the copy's node let its copy go (its last consumer closed). */
  function closeSource(pipeId: string): void {
    const source = sources.get(pipeId);
    if (!source) throw notFound('resource', pipeId);
    source.closedByPeer = true;
    source.transport.close();
  }

  /** The copy's node: the producer paused, resumed or closed on its node. */
  async function copyState(pipeId: string, state: PipeStateBody): Promise<void> {
    const pipe = copies.get(pipeId);
    if (!pipe) throw notFound('resource', pipeId);
    if (state.closed) {
      pipe.closedByPeer = true;
      pipe.transport.close();
      return;
    }
    const producer = pipe.copy.pipeProducer;
    if (state.paused === undefined || !producer || producer.closed) return;
    await engine(state.paused ? 'pause piped copy' : 'resume piped copy', () => (state.paused ? producer.pause!() : producer.resume!()), [], pipe.copy.target.worker).catch(() => {});
  }

  /**
   * The copy's node: makes `producerId` (a producer or data producer), held by another node, consumable on
   * `part` (remote.ensureProducer). The copy is kept in the room's pipes like a worker-to-worker copy, so
   * its lease and release are rooms.ts's.
   */
  function ensureProducer(room: RouterEntry, producerId: string, part: RoomPart, kind: 'producer' | 'dataProducer' = 'producer'): Promise<PipeLease> {
    return leaseCopy(deps.rooms, room, producerId, kind, part, (copy) => copyFrom(room, copy));
  }

  async function copyFrom(room: RouterEntry, copy: PipedCopy): Promise<void> {
    const { producerId, kind, target } = copy;
    const roomId = roomIdOf(room);
    if (!config.pipe) throw notFound(kind, producerId);
    const node = await options.locate(producerId);
    if (!node || node.id === options.nodeId) throw notFound(kind, producerId);
    const listenIp = await pipeListenIp(config.pipe);
    const needs: Needs = [['router', roomId]];
    const transport = await pipeTransport(target.router, target.worker, listenIp, kind, needs);
    try {
      const answer = await ask(node, 'POST', '/v1/cluster/pipes', {
        roomId,
        producerId,
        ...(kind === 'dataProducer' ? { kind } : {}),
        nodeId: options.nodeId,
        ip: listenIp.announcedIp ?? listenIp.ip,
        port: transport.tuple.localPort,
        srtpParameters: transport.srtpParameters,
      });
      if (answer.status !== 201) throw relayed(answer, 'pipe a producer from another node');
      const parsed = openedPipeSchema.safeParse(answer.body);
      if (!parsed.success || (parsed.data.kind === 'data') !== (kind === 'dataProducer')) throw new RelayError('MEDIASOUP_ERROR', `node ${node.id} answered a pipe that is not one`, { nodeId: node.id });
      const opened = parsed.data;
      const pipe: CopyPipe = { transport, nodeId: node.id, producerId, copy, closedByPeer: false };
      copies.set(opened.pipeId, pipe);
      transport.observer.once('close', () => {
        copies.delete(opened.pipeId);
        if (!pipe.closedByPeer) tell(node.id, 'DELETE', `/v1/cluster/pipes/${opened.pipeId}`);
      });
      const problem = pipePeerProblem(opened.ip, isIP(listenIp.ip) === 6 ? 6 : 4, config.pipe.peerCidrs);
      if (problem) throw new RelayError('MEDIASOUP_ERROR', `node ${node.id} pipes from ${opened.ip}: ${problem}`, { nodeId: node.id });
      await engine('connect pipe transport', () => transport.connect({ ip: opened.ip, port: opened.port, srtpParameters: opened.srtpParameters as ms.SrtpParameters }), needs, target.worker);
      copy.pipeProducer =
        opened.kind === 'data'
          ? await engine(
              'create pipe data producer',
              // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- upstream mediasoup 3.27's typings (npm run typecheck:upstream) need it
              () => transport.produceData({ id: producerId, sctpStreamParameters: opened.sctpStreamParameters as ms.SctpStreamParameters, label: opened.label, protocol: opened.protocol }),
              needs,
              target.worker,
            )
          : await engine('create pipe producer', () => transport.produce({ id: producerId, kind: opened.kind, rtpParameters: opened.rtpParameters as unknown as ms.RtpParameters, paused: opened.paused, appData: opened.appData ?? {} }), needs, target.worker);
      copy.pipeConsumer = {
        id: opened.pipeId,
        get closed() {
          return transport.closed;
        },
        close: () => transport.close(),
      };
      if (transport.closed || target.router.closed) throw notFound(kind, producerId);
    } catch (error) {
      transport.close();
      throw error;
    }
  }

  // ---- speaker detection: the observers are the origin's --------------------------------------------

  /** A part of another node's room: its audio producer joins the room's observers on the origin (copied there). */
  async function joinSpeakers(room: RouterEntry, producerId: string): Promise<void> {
    const origin = room.origin;
    if (!origin) return;
    const answer = await ask(nodeById(origin.nodeId), 'POST', `/v1/cluster/rooms/${encodeURIComponent(origin.roomId)}/speakers`, { producerId });
    if (answer.status !== 204) throw relayed(answer, "join the room's speaker observers");
  }

  /**
   * The origin: another node's audio producer joins the room's speaker observers. Its copy here is kept
   * (the lease never released) until the producer closes, as for a producer on another worker
   * (ops/speakers.ts); the copy keeps the producer's appData, which the speaker events name.
   */
  async function joinOriginSpeakers(roomId: string, producerId: string): Promise<void> {
    const room = registry.get('router', roomId);
    if (!room || room.origin) throw notFound('router', roomId);
    if (!room.speakers) return;
    if (!(await observeSpeaker(deps, room, producerId, (part) => ensureProducer(room, producerId, part), [['router', roomId]]))) throw notFound('router', roomId);
  }

  /** Copies a producer's pause or resume to its copies on other nodes before the API answers. */
  async function syncRemote(producerId: string, paused: boolean): Promise<void> {
    await Promise.all(
      [...sources.entries()]
        .filter(([, source]) => source.producerId === producerId && !source.transport.closed)
        .map(([pipeId, source]) => ask(nodeById(source.nodeId), 'POST', `/v1/cluster/pipes/${pipeId}/state`, { paused }).catch(() => undefined)),
    );
  }

  /** Parts here of rooms whose origin was lost: each closes once nothing of it is left here. */
  const orphans = new Set<string>();
  let sweeper: NodeJS.Timeout | undefined;

  /**
   * Closes the orphan parts that hold nothing any more (no transport, nor anything else of the room):
   * nobody can name their room now (calls about it answer NODE_LOST), so nobody would close them. Checked
   * every second while there are orphans.
   */
  function sweepOrphans(): void {
    for (const roomId of orphans) {
      const room = registry.get('router', roomId);
      if (!room?.origin) {
        orphans.delete(roomId);
        continue;
      }
      if (registry.order.some((kind) => kind !== 'router' && registry.countInRoom(roomId, kind) > 0)) continue;
      orphans.delete(roomId);
      logger.info({ roomId, originId: room.origin.nodeId }, 'cluster: a part of a room whose node was lost closed with the last of its transports');
      closeRoom(registry, room, 'node_lost');
    }
    if (orphans.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    } else {
      sweeper ??= setInterval(sweepOrphans, 1_000).unref();
    }
  }

  /**
   * Another node was lost: the copies of its producers close (their consumers with `node_lost`), and the
   * pipes to it. The parts here of its rooms go on while they hold transports (their calls are answered
   * here), and close with the last of them.
   */
  function nodeLost(nodeId: string): void {
    // Its parts of this node's rooms went with it: the rooms go on without them.
    for (const held of parts.values()) held.delete(nodeId);
    for (const room of registry.all('router')) if (room.origin?.nodeId === nodeId) orphans.add(roomIdOf(room));
    for (const pipe of [...copies.values()]) {
      if (pipe.nodeId !== nodeId) continue;
      const here = (entry: { worker: ms.Worker }) => entry.worker === pipe.copy.target.worker;
      if (pipe.copy.kind === 'producer') for (const entry of registry.children('producer', pipe.producerId, 'consumer').filter(here)) registry.markClosing(entry.consumer, 'node_lost');
      else for (const entry of registry.children('dataProducer', pipe.producerId, 'dataConsumer').filter(here)) registry.markClosing(entry.dataConsumer, 'node_lost');
      pipe.closedByPeer = true;
      pipe.transport.close();
    }
    for (const source of [...sources.values()]) {
      if (source.nodeId !== nodeId) continue;
      source.closedByPeer = true;
      source.transport.close();
    }
    sweepOrphans();
  }

  const spans = (room: RouterEntry) => room.origin !== undefined || (parts.get(roomIdOf(room))?.size ?? 0) > 0;
  const remote: RemoteParts = { spans, ensureProducer, syncRemote, joinSpeakers, portsInUse: () => pipePorts };
  return {
    remote,
    placeTransport,
    partsOf: (roomId: string): string[] => [...(parts.get(roomId) ?? [])],
    ensurePart,
    closePart,
    joinOriginSpeakers,
    roomClosed,
    openPipe,
    closeSource,
    copyState,
    nodeLost,
    /** The lost origin of a part held here (named by its room's id): a call about the room answers NODE_LOST, not the part's own state. */
    lostOriginOf: (roomId: string): string | undefined => (orphans.has(roomId) ? registry.get('router', roomId)?.origin?.nodeId : undefined),
  };
}
