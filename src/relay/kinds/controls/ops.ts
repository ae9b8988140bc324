// Controls of live resources: pause/resume, layers, priority, key frames, ICE restart, bitrate, stats.
// State changes go through mediasoup's own API so that its observers (read by the event bridge) fire.
import type { types as ms } from 'mediasoup';
import { conflict, notFound } from '../../errors.js';
import type { ConsumerLayersInput } from './contract.js';
import type { ResourceKind } from '../../registry/kinds.js';
import { syncCopies } from '../../rooms/rooms.js';
import type { OpsDeps } from '../../ops/deps.js';

/** Runs one engine call on a registered resource, then checks it is still there (else NOT_FOUND). */
async function onResource<T>(deps: OpsDeps, kind: ResourceKind, id: string, operation: string, call: () => Promise<T>): Promise<T> {
  const result = await deps.engine(operation, call, [[kind, id]]);
  if (!deps.registry.has(kind, id)) throw notFound(kind, id);
  return result;
}

export async function pauseProducer(deps: OpsDeps, id: string): Promise<ms.Producer> {
  const { producer, routerId } = deps.registry.require('producer', id);
  await onResource(deps, 'producer', id, 'pause producer', () => producer.pause());
  await syncCopies(deps, routerId, id, true);
  return producer;
}

export async function resumeProducer(deps: OpsDeps, id: string): Promise<ms.Producer> {
  const { producer, routerId } = deps.registry.require('producer', id);
  await onResource(deps, 'producer', id, 'resume producer', () => producer.resume());
  await syncCopies(deps, routerId, id, false);
  return producer;
}

export async function pauseConsumer(deps: OpsDeps, id: string): Promise<ms.Consumer> {
  const { consumer } = deps.registry.require('consumer', id);
  await onResource(deps, 'consumer', id, 'pause consumer', () => consumer.pause());
  return consumer;
}

/** Only a simulcast or SVC consumer has layers to choose from; any other answers CONFLICT. */
export async function setConsumerPreferredLayers(deps: OpsDeps, id: string, layers: ConsumerLayersInput): Promise<ms.Consumer> {
  const { consumer } = deps.registry.require('consumer', id);
  if (consumer.type !== 'simulcast' && consumer.type !== 'svc') {
    throw conflict(`consumer has no layers to prefer (type ${consumer.type}): ${id}`, { consumerId: id, type: consumer.type });
  }
  const { spatialLayer, temporalLayer } = layers;
  await onResource(deps, 'consumer', id, 'set consumer preferred layers', () =>
    consumer.setPreferredLayers(temporalLayer === undefined ? { spatialLayer } : { spatialLayer, temporalLayer }),
  );
  return consumer;
}

export async function setConsumerPriority(deps: OpsDeps, id: string, priority: number): Promise<ms.Consumer> {
  const { consumer } = deps.registry.require('consumer', id);
  await onResource(deps, 'consumer', id, 'set consumer priority', () => consumer.setPriority(priority));
  return consumer;
}

export async function requestConsumerKeyFrame(deps: OpsDeps, id: string): Promise<void> {
  const { consumer } = deps.registry.require('consumer', id);
  await onResource(deps, 'consumer', id, 'request key frame', () => consumer.requestKeyFrame());
}

export async function restartTransportIce(deps: OpsDeps, id: string): Promise<ms.IceParameters> {
  const { transport } = deps.registry.require('transport', id);
  return onResource(deps, 'transport', id, 'restart ICE', () => transport.restartIce());
}

export async function setTransportMaxIncomingBitrate(deps: OpsDeps, id: string, bitrate: number): Promise<void> {
  const { transport } = deps.registry.require('transport', id);
  await onResource(deps, 'transport', id, 'set max incoming bitrate', () => transport.setMaxIncomingBitrate(bitrate));
}

/** The engine's stats array of a transport, producer or consumer, as mediasoup reports it. */
export async function getStats(deps: OpsDeps, kind: 'transport' | 'producer' | 'consumer', id: string): Promise<unknown[]> {
  const entry = deps.registry.require(kind, id);
  const resource = (entry as unknown as Record<string, { getStats(): Promise<unknown[]> }>)[kind]!;
  return onResource(deps, kind, id, `get ${kind} stats`, () => resource.getStats());
}
