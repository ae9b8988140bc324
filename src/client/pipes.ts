// Cascading relays from a signaling server: a producer of relay A carried to a room on relay B in
// one call, one pipe transport pair per pair of rooms, and the events that keep both sides in step.
import { RelayClientError } from './errors.js';
import type { PipeRelay, RelayStreamEvent } from './types.js';

/** One side of a pipe: a relay (its typed client, createRelayClient's) and a room (router) on it. */
export interface PipeEnd {
  relay: PipeRelay;
  routerId: string;
}

/** A producer of A now also on B, under the same id. */
export interface PipedProducer {
  producerId: string;
  kind: 'audio' | 'video';
  /** On A: the pipe transport and the pipe consumer sending the producer. */
  from: PipeEnd & { pipeTransportId: string; pipeConsumerId: string };
  /** On B: the pipe transport; the producer there has the id `producerId`. */
  to: PipeEnd & { pipeTransportId: string };
  /** Stops piping it: closes the pipe consumer on A and the producer on B (its consumers on B close with it). */
  close(): Promise<void>;
}

interface PairSide extends PipeEnd {
  pipeTransportId: string;
}

type Pair = { [routerId: string]: PairSide };

export interface Pipes {
  /**
   * Creates (or reuses) the pipe transport pair of the two rooms, connects it crosswise, consumes
   * `producerId` on A and produces it on B. Piping the same producer to the same room again answers
   * the pipe already made.
   */
  pipeProducer(input: { from: PipeEnd; to: PipeEnd; producerId: string; appData?: Record<string, unknown> }): Promise<PipedProducer>;
  /**
   * Feeds one event of any relay: when a pipe consumer closes on A (its producer closed), the piped
   * producer on B is closed (its consumers there close); when the producer on A pauses or resumes, so
   * does its copy on B (B's consumers see producerPaused); when a piped producer closes on B, the pipe
   * consumer on A is closed; when a pipe transport or a room closes, the other side's pipe transport is
   * closed and the pair forgotten. Errors of the relays are swallowed only when the resource is gone
   * (NOT_FOUND); others are thrown.
   */
  handleEvent(event: RelayStreamEvent): Promise<void>;
  /** `handleEvent` for each event of a stream (e.g. `relayA.events()`) until it ends or `signal` aborts. */
  followPipes(events: AsyncIterable<RelayStreamEvent>, signal?: AbortSignal): Promise<void>;
  /** The pipes open now. */
  piped(): PipedProducer[];
}

/**
 * @example
 * const pipes = createPipes()
 * const piped = await pipes.pipeProducer({ from: { relay: relayA, routerId: roomA }, to: { relay: relayB, routerId: roomB }, producerId })
 * void pipes.followPipes(relayA.events({ routerIds: [roomA] }))
 * // on relay B, consume `producerId` like any producer of roomB
 */
export function createPipes(): Pipes {
  /** Pair key (the two router ids, sorted) → the pair, or the creation under way. */
  const pairs = new Map<string, Promise<Pair>>();
  /** `${toRouterId}:${producerId}` → pipe. */
  const byTarget = new Map<string, PipedProducer>();
  const byPipeConsumer = new Map<string, PipedProducer>();

  const pairKey = (a: string, b: string) => [a, b].sort().join('|');

  async function makePair(a: PipeEnd, b: PipeEnd): Promise<Pair> {
    const sideA = await a.relay.createPipeTransport({ routerId: a.routerId });
    let sideB: Awaited<ReturnType<PipeRelay['createPipeTransport']>>;
    try {
      sideB = await b.relay.createPipeTransport({ routerId: b.routerId });
    } catch (error) {
      await ignoreGone(a.relay.closePipeTransport(sideA.id));
      throw error;
    }
    try {
      await a.relay.connectPipeTransport(sideA.id, { ip: sideB.ip, port: sideB.port, ...(sideB.srtpParameters ? { srtpParameters: sideB.srtpParameters } : {}) });
      await b.relay.connectPipeTransport(sideB.id, { ip: sideA.ip, port: sideA.port, ...(sideA.srtpParameters ? { srtpParameters: sideA.srtpParameters } : {}) });
    } catch (error) {
      await ignoreGone(a.relay.closePipeTransport(sideA.id));
      await ignoreGone(b.relay.closePipeTransport(sideB.id));
      throw error;
    }
    return { [a.routerId]: { ...a, pipeTransportId: sideA.id }, [b.routerId]: { ...b, pipeTransportId: sideB.id } };
  }

  function pairOf(a: PipeEnd, b: PipeEnd): Promise<Pair> {
    const key = pairKey(a.routerId, b.routerId);
    let pair = pairs.get(key);
    if (!pair) {
      pair = makePair(a, b);
      pairs.set(key, pair);
      pair.catch(() => pairs.delete(key));
    }
    return pair;
  }

  function forget(piped: PipedProducer): void {
    byTarget.delete(`${piped.to.routerId}:${piped.producerId}`);
    byPipeConsumer.delete(piped.from.pipeConsumerId);
  }

  /** Forgets a pair whose pipe transport `pipeTransportId` closed, and closes the other side's. */
  async function dropPairOf(match: (side: PairSide) => boolean): Promise<void> {
    for (const [key, promise] of [...pairs]) {
      const pair = await promise.catch(() => undefined);
      if (!pair) continue;
      const sides = Object.values(pair);
      if (!sides.some(match)) continue;
      pairs.delete(key);
      for (const piped of [...byTarget.values()]) {
        if (sides.some((s) => s.pipeTransportId === piped.from.pipeTransportId || s.pipeTransportId === piped.to.pipeTransportId)) forget(piped);
      }
      for (const side of sides) if (!match(side)) await ignoreGone(side.relay.closePipeTransport(side.pipeTransportId));
    }
  }

  return {
    async pipeProducer({ from, to, producerId, appData }) {
      const known = byTarget.get(`${to.routerId}:${producerId}`);
      if (known) return known;
      const pair = await pairOf(from, to);
      const a = pair[from.routerId]!;
      const b = pair[to.routerId]!;
      const consumer = await from.relay.createPipeConsumer(a.pipeTransportId, producerId);
      try {
        await to.relay.createPipeProducer(b.pipeTransportId, {
          producerId,
          kind: consumer.kind,
          rtpParameters: consumer.rtpParameters as Parameters<PipeRelay['createPipeProducer']>[1]['rtpParameters'],
          paused: consumer.producerPaused,
          ...(appData ? { appData } : {}),
        });
      } catch (error) {
        await ignoreGone(from.relay.closeConsumer(consumer.id));
        throw error;
      }
      const piped: PipedProducer = {
        producerId,
        kind: consumer.kind,
        from: { ...from, pipeTransportId: a.pipeTransportId, pipeConsumerId: consumer.id },
        to: { ...to, pipeTransportId: b.pipeTransportId },
        async close() {
          forget(piped);
          await ignoreGone(from.relay.closeConsumer(consumer.id));
          await ignoreGone(to.relay.closeProducer(producerId));
        },
      };
      byTarget.set(`${to.routerId}:${producerId}`, piped);
      byPipeConsumer.set(consumer.id, piped);
      return piped;
    },

    async handleEvent(event) {
      switch (event.type) {
        case 'consumer.closed': {
          const piped = byPipeConsumer.get(event.consumerId);
          if (!piped) return;
          forget(piped);
          await ignoreGone(piped.to.relay.closeProducer(piped.producerId));
          return;
        }
        case 'producer.closed': {
          const piped = byTarget.get(`${event.routerId}:${event.producerId}`);
          if (!piped || piped.to.pipeTransportId !== event.transportId) return;
          forget(piped);
          await ignoreGone(piped.from.relay.closeConsumer(piped.from.pipeConsumerId));
          return;
        }
        case 'producer.paused':
        case 'producer.resumed': {
          // A's producer paused: its pipe consumer stops sending; B's copy says so to B's consumers.
          const paused = event.type === 'producer.paused';
          for (const piped of byTarget.values()) {
            if (piped.producerId !== event.producerId || piped.from.routerId !== event.routerId) continue;
            await ignoreGone(paused ? piped.to.relay.pauseProducer(piped.producerId) : piped.to.relay.resumeProducer(piped.producerId));
          }
          return;
        }
        case 'pipeTransport.closed':
          await dropPairOf((side) => side.pipeTransportId === event.pipeTransportId);
          return;
        case 'router.closed':
          await dropPairOf((side) => side.routerId === event.routerId);
          return;
        default:
          return;
      }
    },

    async followPipes(events, signal) {
      for await (const event of events) {
        if (signal?.aborted) return;
        await this.handleEvent(event);
      }
    },

    piped: () => [...byTarget.values()],
  };
}

/** Resolves when the call succeeded or its resource is already gone (NOT_FOUND). */
async function ignoreGone(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (error instanceof RelayClientError && error.code === 'NOT_FOUND') return;
    throw error;
  }
}
