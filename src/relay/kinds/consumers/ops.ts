// Consumers: a producer's media forwarded to a recv transport of the same room, piped from the
// producer's worker when the transport lives on another one. A plain transport takes consumers too
// (RTP out of the room: a recording, an RTMP bridge).
import type { types as ms } from 'mediasoup';
import { adopt, goneError, type Needs } from '../../engine/call.js';
import { notFound, RelayError } from '../../errors.js';
import type { CreateConsumerBody } from './contract.js';
import type { ConsumerEntry } from '../../registry/kinds.js';
import { ensureProducerOn, requirePart } from '../../rooms/rooms.js';
import { directionConflict, requireMediaTransport, type OpsDeps } from '../../ops/deps.js';

/** Consumers always start paused; `producerPaused` is what the engine reports. */
export async function createConsumer(deps: OpsDeps, input: CreateConsumerBody): Promise<ConsumerEntry> {
  const { registry, engine, caps } = deps;
  const { transportId, producerId } = input;
  const entry = requireMediaTransport(registry, transportId);
  if (entry.kind === 'transport' && entry.entry.direction !== 'recv') throw directionConflict(`cannot consume on a send transport: ${transportId}`, entry.entry);
  if (entry.kind === 'transport' && entry.entry.outsideRoom) {
    throw new RelayError('CONFLICT', `transport ${transportId} is a WHEP session's: the session feeds its consumers; consume on a transport of your own`, { transportId });
  }
  const room = registry.require('router', entry.routerId);
  const rtpCapabilities = input.rtpCapabilities as unknown as ms.RtpCapabilities;
  const producer = registry.get('producer', producerId);
  // Not here: in a room that spans cluster nodes, another node may hold it (copied here below).
  if (!producer && !deps.span?.spans(room)) throw notFound('producer', producerId);
  if (producer) {
    // Every part of a room has the same capabilities: asking the producer's own part is asking the consumer's.
    const router = room.parts.get(producer.worker)?.router ?? room.router;
    if (producer.routerId !== entry.routerId || !router.canConsume({ producerId, rtpCapabilities })) throw cannotConsume(producerId, transportId, producer.routerId !== entry.routerId);
  }
  return caps.reserve(entry.routerId, 'consumer', async () => {
    const part = requirePart(room, entry.worker, 'create consumer');
    // A producer on another worker of the room is piped to this transport's worker first (once); one on
    // another node, copied from there.
    const lease = producer ? await ensureProducerOn(deps, producerId, part) : await deps.span!.ensureProducer(room, producerId, part);
    try {
      if (!producer && !part.router.canConsume({ producerId, rtpCapabilities })) throw cannotConsume(producerId, transportId, false);
      const needs: Needs = producer
        ? [
            [entry.kind, transportId],
            ['producer', producerId],
          ]
        : [[entry.kind, transportId]];
      const consumer = await engine('create consumer', () => entry.transport.consume({ producerId, rtpCapabilities, paused: true, ...(input.appData ? { appData: input.appData } : {}) }), needs);
      return adopt(consumer, () => {
        if (!registry.has(entry.kind, transportId)) throw goneError('transport', transportId, entry.worker, 'create consumer');
        if (consumer.closed || (producer && !registry.has('producer', producerId))) throw goneError('producer', producerId, entry.worker, 'create consumer');
        return registry.add('consumer', { consumer, worker: entry.worker, routerId: entry.routerId, transportId, producerId });
      });
    } finally {
      lease.release();
    }
  });
}

function cannotConsume(producerId: string, transportId: string, otherRouter: boolean): RelayError {
  return new RelayError('CAN_NOT_CONSUME', `cannot consume producer ${producerId} with the given capabilities`, {
    producerId,
    transportId,
    ...(otherRouter ? { reason: 'producer belongs to another router' } : {}),
  });
}

export async function resumeConsumer(deps: OpsDeps, id: string): Promise<ms.Consumer> {
  const { registry, engine } = deps;
  const { consumer, worker } = registry.require('consumer', id);
  await engine('resume consumer', () => consumer.resume(), [['consumer', id]]);
  if (!registry.has('consumer', id)) throw goneError('consumer', id, worker, 'resume consumer');
  return consumer;
}

export function closeConsumer(deps: OpsDeps, id: string): void {
  const { consumer } = deps.registry.require('consumer', id);
  deps.registry.markClosing(consumer, 'api');
  consumer.close();
}
