// The answers' shapes, built field by field from the engine's objects (never spread).
import type { types as ms } from 'mediasoup';
import packageJson from '../../../package.json' with { type: 'json' };
import { formatTime } from '../../time.js';
import type { RelayEventsInfo } from '../events/index.js';
import type { MediaInfo } from '../index.js';
import type { ConsumerEntry, TransportEntry } from '../registry/kinds.js';

export function routerView(router: ms.Router) {
  return { id: router.id, rtpCapabilities: router.rtpCapabilities };
}

export function transportView({ transport, routerId, direction }: TransportEntry) {
  return {
    id: transport.id,
    routerId,
    direction,
    iceParameters: transport.iceParameters,
    iceCandidates: transport.iceCandidates,
    dtlsParameters: transport.dtlsParameters,
    ...(transport.sctpParameters ? { sctpParameters: transport.sctpParameters } : {}),
  };
}

export function producerView(producer: ms.Producer, transportId: string) {
  return { id: producer.id, transportId, kind: producer.kind, type: producer.type, paused: producer.paused };
}

export function consumerView({ consumer, transportId, producerId }: ConsumerEntry) {
  return {
    id: consumer.id,
    transportId,
    producerId,
    kind: consumer.kind,
    type: consumer.type,
    rtpParameters: consumer.rtpParameters,
    paused: consumer.paused,
    producerPaused: consumer.producerPaused,
  };
}

export function consumerStateView(consumer: ms.Consumer) {
  return { id: consumer.id, paused: consumer.paused, producerPaused: consumer.producerPaused };
}

export function infoView(info: MediaInfo, events: RelayEventsInfo, now = Date.now()) {
  return {
    version: packageJson.version,
    started_at: formatTime(info.startedAt),
    uptime_s: Math.floor((now - info.startedAt.getTime()) / 1000),
    workers: info.workers,
    counts: info.counts,
    limits: info.limits,
    events,
  };
}
