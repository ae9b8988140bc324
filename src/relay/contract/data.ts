// Bodies of the data producer/consumer endpoints (src/relay/http/data.routes.ts), each member bounded.
import { z } from 'zod';
import { appDataSchema, BOUNDS } from './bounds.js';

export const DATA_BOUNDS = {
  /**
   * SCTP stream ids a client may send on: a transport is created with numSctpStreams OS = MIS = 1024
   * (ops/transports.ts), so incoming streams are 0-1023.
   */
  streamId: { min: 0, max: 1023 },
  /**
   * RFC 8831 §6.6 / W3C: maxPacketLifeTime and maxRetransmits are unsigned 16-bit values (the
   * DATA_CHANNEL_OPEN message carries them in a 32-bit field, browsers cap them at 65535). From 1:
   * mediasoup 3.11's worker keeps 0 as "not set", which would make the stream reliable unasked.
   */
  maxPacketLifeTime: { min: 1, max: 65_535 },
  maxRetransmits: { min: 1, max: 65_535 },
  /**
   * Label and protocol: RFC 8832 allows 65535 bytes each, W3C RTCDataChannel refuses more than 65535;
   * apps use short names ("chat", "reactions"). 1024 characters keep the relay's memory per channel small.
   */
  label: 1024,
  protocol: 1024,
} as const;

const int = (range: { min: number; max: number }) => z.number().int().min(range.min).max(range.max);
const id = z.string().min(1).max(BOUNDS.id);

/**
 * SCTP stream of a data producer (what the client's RTCDataChannel uses). Reliable and ordered by
 * default; maxPacketLifeTime and maxRetransmits make it partially reliable, one or the other.
 */
export const sctpStreamParametersSchema = z
  .object({
    streamId: int(DATA_BOUNDS.streamId),
    ordered: z.boolean().optional(),
    maxPacketLifeTime: int(DATA_BOUNDS.maxPacketLifeTime).optional(),
    maxRetransmits: int(DATA_BOUNDS.maxRetransmits).optional(),
  })
  .refine((p) => p.maxPacketLifeTime === undefined || p.maxRetransmits === undefined, {
    message: 'maxPacketLifeTime and maxRetransmits are mutually exclusive',
  })
  .refine((p) => p.ordered !== true || (p.maxPacketLifeTime === undefined && p.maxRetransmits === undefined), {
    message: 'an ordered stream cannot have maxPacketLifeTime or maxRetransmits',
  });

export const createDataProducerBody = z.object({
  transportId: id,
  sctpStreamParameters: sctpStreamParametersSchema.optional(),
  label: z.string().max(DATA_BOUNDS.label).optional(),
  protocol: z.string().max(DATA_BOUNDS.protocol).optional(),
  appData: appDataSchema.optional(),
});

export const createDataConsumerBody = z.object({
  transportId: id,
  dataProducerId: id,
  appData: appDataSchema.optional(),
});

export type CreateDataProducerBody = z.infer<typeof createDataProducerBody>;
export type CreateDataConsumerBody = z.infer<typeof createDataConsumerBody>;
