// The answers' shapes, built field by field from the engine's objects (never spread).
import type { types as ms } from 'mediasoup';
import packageJson from '../../../package.json' with { type: 'json' };
import { formatTime } from '../../time.js';
import type { MediaInfo } from '../index.js';
import type { ConsumerEntry, TransportEntry } from '../registry/kinds.js';

/** The id twice: `routerId` is the field a signaling server written in Go reads (docs/media-relay.md). */
export function routerView(router: ms.Router) {
  return { id: router.id, routerId: router.id, rtpCapabilities: router.rtpCapabilities };
}

/**
 * One shape whatever the engine: mediasoup 3.11 names the candidate's address `ip`, current
 * mediasoup (and mediasoup-client) `address`; both are filled.
 */
export function iceCandidateView(candidate: ms.IceCandidate) {
  const named = candidate as unknown as { ip?: string; address?: string };
  const address = (named.address ?? named.ip)!;
  return {
    foundation: candidate.foundation,
    priority: candidate.priority,
    address,
    ip: address,
    protocol: candidate.protocol,
    port: candidate.port,
    type: candidate.type,
    ...(candidate.tcpType ? { tcpType: candidate.tcpType } : {}),
  };
}

export function transportView({ transport, routerId, direction }: TransportEntry) {
  return {
    id: transport.id,
    routerId,
    direction,
    iceParameters: transport.iceParameters,
    iceCandidates: transport.iceCandidates.map(iceCandidateView),
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

export function infoView(info: MediaInfo, now = Date.now()) {
  return {
    version: packageJson.version,
    started_at: formatTime(info.startedAt),
    uptime_s: Math.floor((now - info.startedAt.getTime()) / 1000),
    workers: info.workers,
    counts: info.counts,
    limits: info.limits,
    largestRouter: info.largestRouter,
  };
}
