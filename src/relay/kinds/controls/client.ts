// The typed client's methods for the controls of live producers, consumers and transports: assembled into RelayClient by src/client/relay-client.ts. Only
// types are imported (Hono's RPC client over the relay's API type, the generated wire types), so the
// client package bundles this file without any server code.
import { openKit, type ClientKit } from '../../../client/kit.js';
import type { RelayApi } from '../../contract/api.js';
import type * as Wire from '../../../client/wire.gen.js';

export interface ControlsClient {
  pauseProducer(id: string): Promise<Wire.PausedState>;
  resumeProducer(id: string): Promise<Wire.PausedState>;
  producerStats(id: string): Promise<Wire.Stats>;
  pauseConsumer(id: string): Promise<Wire.ConsumerState>;
  /** Simulcast or SVC consumers only (CONFLICT otherwise). */
  setConsumerPreferredLayers(id: string, layers: Wire.PreferredLayersBody): Promise<Wire.ConsumerLayers>;
  /** 1-255. */
  setConsumerPriority(id: string, priority: number): Promise<Wire.ConsumerPriority>;
  requestKeyFrame(id: string): Promise<void>;
  consumerStats(id: string): Promise<Wire.Stats>;
  restartIce(id: string): Promise<Wire.IceRestart>;
  /** bps, 10 000-100 000 000. */
  setMaxIncomingBitrate(id: string, bitrate: number): Promise<void>;
  transportStats(id: string): Promise<Wire.Stats>;
}

export function controlsClient(kit: ClientKit): ControlsClient {
  const { rpc, json, empty } = openKit<RelayApi>(kit);
  const { transports, producers, consumers } = rpc.v1;
  return {
    pauseProducer: (id) => json(producers[':id'].pause.$post({ param: { id } })),
    resumeProducer: (id) => json(producers[':id'].resume.$post({ param: { id } })),
    producerStats: (id) => json(producers[':id'].stats.$get({ param: { id } })),
    pauseConsumer: (id) => json(consumers[':id'].pause.$post({ param: { id } })),
    setConsumerPreferredLayers: (id, layers) => json(consumers[':id']['preferred-layers'].$post({ param: { id }, json: layers })),
    setConsumerPriority: (id, priority) => json(consumers[':id'].priority.$post({ param: { id }, json: { priority } })),
    requestKeyFrame: (id) => empty(consumers[':id']['key-frame'].$post({ param: { id } })),
    consumerStats: (id) => json(consumers[':id'].stats.$get({ param: { id } })),
    restartIce: (id) => json(transports[':id']['restart-ice'].$post({ param: { id } })),
    setMaxIncomingBitrate: (id, bitrate) => empty(transports[':id']['max-incoming-bitrate'].$post({ param: { id }, json: { bitrate } })),
    transportStats: (id) => json(transports[':id'].stats.$get({ param: { id } })),
  };
}
