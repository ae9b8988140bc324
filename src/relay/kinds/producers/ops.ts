// Producers: media a client sends on a send transport, or an RTP sender on a plain transport (ingest).
import type { types as ms } from 'mediasoup';
import { adopt, goneError } from '../../engine/call.js';
import { conflict, RelayError } from '../../errors.js';
import type { ProducerEntry } from '../../registry/kinds.js';
import type { CreateProducerBody } from './contract.js';
import { directionConflict, requireMediaTransport, type OpsDeps } from '../../ops/deps.js';
import { joinSpeakerDetection } from '../../ops/speakers.js';

export async function createProducer(deps: OpsDeps, input: CreateProducerBody): Promise<ms.Producer> {
  const { registry, engine, caps } = deps;
  const { transportId } = input;
  const entry = requireMediaTransport(registry, transportId);
  if (entry.kind === 'transport' && entry.entry.direction !== 'send') throw directionConflict(`cannot produce on a recv transport: ${transportId}`, entry.entry);
  const direction = entry.kind === 'transport' ? { direction: entry.entry.direction } : {};
  return caps.reserve(entry.routerId, 'producer', async () => {
    const producer = await engine(
      'create producer',
      () =>
        entry.transport.produce({
          kind: input.kind,
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- upstream mediasoup 3.27's typings (npm run typecheck:upstream) need it
          rtpParameters: input.rtpParameters as unknown as ms.RtpParameters,
          paused: input.paused ?? false,
          ...(input.appData ? { appData: input.appData } : {}),
        }),
      [[entry.kind, transportId]],
    ).catch((error: unknown) => {
      // An ssrc/MID clash with another producer: name the transport as every CONFLICT does.
      if (error instanceof RelayError && error.code === 'CONFLICT') throw conflict(error.message, { transportId, ...direction, ...error.details });
      throw error;
    });
    adopt(producer, () => {
      if (producer.closed || !registry.has(entry.kind, transportId)) throw goneError('transport', transportId, entry.worker, 'create producer');
      registry.add('producer', { producer, worker: entry.worker, routerId: entry.routerId, transportId });
    });
    // An audio producer that could not join its room's speaker observers is closed, never left half-made.
    await joinSpeakerDetection(deps, producer, entry.routerId).catch((error: unknown) => {
      producer.close();
      throw error;
    });
    return producer;
  });
}

export function closeProducer(deps: OpsDeps, id: string): void {
  const { producer } = deps.registry.require('producer', id);
  deps.registry.markClosing(producer, 'api');
  producer.close();
}

/** A producer's entry (its kind, codecs and room), for what builds on producers (recordings). */
export function getProducer(deps: OpsDeps, id: string): ProducerEntry {
  return deps.registry.require('producer', id);
}
